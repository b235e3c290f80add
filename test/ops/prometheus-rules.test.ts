// The monitoring files in ops/: the Prometheus alert rules (checked and unit-tested by promtool) and the
// Grafana dashboard. Every metric an alert or a panel names must be one the service defines: the names
// are read from src/ (each `name: 'hashlock_…'`, and prom-client's default process metrics under the
// prefix src/api/metrics.ts gives them), so a renamed or removed metric fails here, not on a dashboard.
// promtool comes with Debian's `prometheus` package (.ci/run installs it); in CI (CI=true) a missing
// promtool fails the test, elsewhere it is skipped with a loud message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectDefaultMetrics, Registry } from 'prom-client';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES = join(ROOT, 'ops/prometheus/hashlock-alerts.yml');
const RULE_TESTS = join(ROOT, 'ops/prometheus/hashlock-alerts.test.yml');
const DASHBOARD = join(ROOT, 'ops/grafana/hashlock-dashboard.json');
const OPERATIONS = join(ROOT, 'docs/operations.md');

/** Series Prometheus or its exporters make, not the service: `up` per target, the blackbox exporter's probe result. */
const EXTERNAL = new Set(['up']);

/** The .ts files under `dir` (in the compiled test mirror they are links, so they are told by name). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every series name the service's /metrics can show, as src/ defines them. */
function definedSeries(): Set<string> {
  const names = new Set<string>();
  const histograms = new Set<string>();
  let defaultsPrefix: string | undefined;
  for (const file of sources(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:name:\s*|\(\s*)'(hashlock_[a-z0-9_]+)'/g)) names.add(m[1]!);
    for (const m of text.matchAll(/new Histogram\(\{\s*name:\s*'(hashlock_[a-z0-9_]+)'/g)) histograms.add(m[1]!);
    const defaults = /collectDefaultMetrics\(\{[^}]*prefix:\s*'([a-z_]+)'/.exec(text);
    if (defaults) defaultsPrefix = defaults[1];
  }
  assert.ok(names.size > 10, `found only ${names.size} metric names in src/`);
  if (defaultsPrefix) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: defaultsPrefix });
    for (const metric of registry.getMetricsAsArray()) {
      names.add(metric.name);
      if (String(metric.type) === 'histogram') histograms.add(metric.name);
    }
  }
  for (const name of histograms) for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  return names;
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression selects (functions, aggregations, keywords and labels left out). */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const before = bare[m.index - 1] ?? ' ';
    if (/[0-9.$]/.test(before)) continue; // 5m, 1e3, $__rate_interval
    if (bare.slice(m.index + m[0].length).trimStart().startsWith('(')) continue; // a function or an aggregation
    if (PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.push(m[0]);
  }
  return names;
}

interface AlertRule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}

const unquote = (value: string): string => {
  const v = value.trim();
  if (v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replaceAll("''", "'");
  if (v.startsWith('"') && v.endsWith('"')) return JSON.parse(v) as string;
  return v;
};

/** The alert rules as the file writes them: one `expr:` line each (its header says so), annotations one line each. */
function alertRules(): AlertRule[] {
  const rules: AlertRule[] = [];
  let current: AlertRule | undefined;
  for (const line of readFileSync(RULES, 'utf8').split('\n')) {
    const alert = /^\s*- alert:\s*(\S+)\s*$/.exec(line);
    if (alert) {
      current = { alert: alert[1]!, expr: '', annotations: {} };
      rules.push(current);
      continue;
    }
    if (!current) continue;
    const expr = /^\s+expr:\s*(.+)$/.exec(line);
    if (expr) current.expr = unquote(expr[1]!);
    const annotation = /^\s+(summary|description|runbook):\s*(.+)$/.exec(line);
    if (annotation) current.annotations[annotation[1]!] = unquote(annotation[2]!);
  }
  return rules;
}

/** GitHub's anchors of a Markdown file's headings. */
function anchors(markdown: string): Set<string> {
  const slugs = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    slugs.add(
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return slugs;
}

/** Runs promtool, or answers undefined (skipping the test loudly) when it is not installed outside CI. */
function promtool(t: TestContext, args: string[]): { status: number | null; output: string } | undefined {
  const run = spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000 });
  if (run.error && 'code' in run.error && run.error.code === 'ENOENT') {
    if (process.env.CI) throw new Error('promtool is not on the PATH: .ci/run installs it (apt-get install prometheus)');
    console.warn('\n!!! SKIPPED: promtool is not on the PATH; install it (apt-get install prometheus) to check the alert rules\n');
    t.skip('promtool is not installed');
    return undefined;
  }
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test('promtool accepts the alert rules', (t) => {
  const run = promtool(t, ['check', 'rules', RULES]);
  if (run) assert.equal(run.status, 0, run.output);
});

test("the alert rules pass promtool's unit tests", (t) => {
  const run = promtool(t, ['test', 'rules', RULE_TESTS]);
  if (run) assert.equal(run.status, 0, run.output);
});

test('every alert names only metrics the service defines and has a summary, a description and a runbook section', () => {
  const defined = definedSeries();
  const rules = alertRules();
  assert.ok(rules.length >= 8, `only ${rules.length} alerts read from ${RULES}`);
  const sections = anchors(readFileSync(OPERATIONS, 'utf8'));
  const testFile = readFileSync(RULE_TESTS, 'utf8');
  for (const rule of rules) {
    assert.ok(rule.expr, `${rule.alert}: no expr`);
    const names = metricNames(rule.expr);
    assert.ok(names.length > 0, `${rule.alert}: no metric in ${rule.expr}`);
    for (const name of names) assert.ok(defined.has(name) || EXTERNAL.has(name), `${rule.alert}: ${name} is not a metric the service defines`);
    for (const key of ['summary', 'description', 'runbook']) assert.ok(rule.annotations[key], `${rule.alert}: no ${key} annotation`);
    const runbook = /^docs\/operations\.md#([a-z0-9_-]+)$/.exec(rule.annotations.runbook!);
    assert.ok(runbook, `${rule.alert}: the runbook ${rule.annotations.runbook} is not a docs/operations.md anchor`);
    assert.ok(sections.has(runbook[1]!), `${rule.alert}: docs/operations.md has no section #${runbook[1]}`);
    assert.match(testFile, new RegExp(`alertname: ${rule.alert}\\b`), `${rule.alert}: no unit test in ${RULE_TESTS}`);
  }
});

test('the dashboard is a Grafana dashboard on a Prometheus data source variable whose queries name only defined metrics', () => {
  const defined = definedSeries();
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    schemaVersion: number;
    uid: string;
    templating: { list: Array<{ name: string; type: string; query: unknown }> };
    panels: Array<{ id: number; type: string; title: string; datasource?: { uid: string }; targets?: Array<{ expr: string; datasource?: { uid: string } }> }>;
  };
  assert.ok(dashboard.schemaVersion >= 36, `schemaVersion ${dashboard.schemaVersion}`);
  assert.ok(dashboard.uid);
  const variables = dashboard.templating.list;
  assert.ok(variables.some((v) => v.name === 'datasource' && v.type === 'datasource' && v.query === 'prometheus'), 'no Prometheus data source variable');
  for (const v of variables.filter((v) => v.type === 'query')) {
    const query = typeof v.query === 'string' ? v.query : (v.query as { query: string }).query;
    const metric = /^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,/.exec(query);
    assert.ok(metric, `variable ${v.name}: ${query}`);
    assert.ok(defined.has(metric[1]!), `variable ${v.name}: ${metric[1]} is not a metric the service defines`);
  }
  const ids = new Set<number>();
  let exprs = 0;
  for (const panel of dashboard.panels) {
    assert.ok(!ids.has(panel.id), `duplicate panel id ${panel.id}`);
    ids.add(panel.id);
    if (panel.type === 'row') continue;
    assert.equal(panel.datasource?.uid, '${datasource}', `${panel.title}: not on the data source variable`);
    assert.ok(panel.targets && panel.targets.length > 0, `${panel.title}: no query`);
    for (const target of panel.targets) {
      exprs++;
      const names = metricNames(target.expr);
      assert.ok(names.length > 0, `${panel.title}: no metric in ${target.expr}`);
      for (const name of names) assert.ok(defined.has(name) || EXTERNAL.has(name), `${panel.title}: ${name} is not a metric the service defines`);
    }
  }
  assert.ok(exprs >= 20, `only ${exprs} queries`);
});

test('metricNames reads the selectors of an expression, not its functions, labels or keywords', () => {
  assert.deepEqual(
    metricNames('sum by (chain) (rate(a_total{job="x",route=~"/v2/(a|b)"}[5m] offset 1h)) / on (chain) group_left max(b) > 0 and c unless absent(d)'),
    ['a_total', 'b', 'c', 'd'],
  );
  assert.deepEqual(metricNames('histogram_quantile(0.95, sum by (le) (rate(h_bucket{a="b"}[$__rate_interval])))'), ['h_bucket']);
});
