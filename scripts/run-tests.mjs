// `npm test`: every test/**/*.test.ts file through node's test runner, with lint and the type-check
// running beside the tests. One report and one summary for all of it, then the ten slowest files.
// The test processes run src/ and test/ compiled to JavaScript (scripts/compile-tests.mjs, half a
// second), not through tsx: on Node 20 tsx's loader hooks run on another thread, and the crossing for
// every module loaded doubled the CPU each process spent loading the service. A failure's stack names
// the compiled file (.test-js/test/...js, readable beside its source); run with
// NODE_OPTIONS=--enable-source-maps for the TypeScript lines (it costs each process about a second).
//
// Files run in lanes, each a `run()` of node's test runner with a concurrency of its own:
// - `nodes`: files that start real chains, devnets or service processes. They spend most of their
//   time waiting on blocks and outages, so several run at once;
// - `fixed-ports`: files that need fixed ports (Garden's SDK expects anvil on 8545 and 8546, and
//   `hashlock dev` takes them unless told `--free-ports`), one at a time;
// - `cpu`: the rest (unit, API and store tests), as many at once as there are cores.
// Loading the service still costs a process about 2 s of CPU, so the `cpu` lane runs several files in
// one process, each file under a suite named by its path, one after another.
//
// `--quick` (`npm run test:quick`) runs the unit and store tests only, for the edit loop; files named
// on the command line run alone, in their lanes; neither, nor `--no-checks`, runs lint and type-check.
// `--list` prints the lanes and their files.
import { spawn } from 'node:child_process';
import { clearTimeout, setTimeout } from 'node:timers';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { pathToFileURL } from 'node:url';
import { COMPILED, compileTests } from './compile-tests.mjs';

const CORES = availableParallelism();
const envNumber = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);

/** Lanes in the order a file is matched against them; the last takes every file left. */
const LANES = [
  { name: 'fixed-ports', concurrency: 1, perProcess: 1, match: /^test\/garden-sdk\/(?!aggregator)|^test\/e2e\/garden-sdk-relayer\.test\.ts$|^test\/devnet\/dev-killed\.test\.ts$|^test\/chains\/evm\/devnet\.test\.ts$/ },
  {
    name: 'nodes',
    concurrency: envNumber('HASHLOCK_TEST_NODE_LANE', Math.max(4, CORES * 2)),
    perProcess: 1,
    match: /^test\/(e2e|cli|devnet|solver|mcp|contracts|engine|chains)\/|^test\/garden-sdk\/aggregator|^test\/(api|relayer|affiliates|explorer)\/.*(end-to-end|solana|tron|race|claims|explorer)/,
  },
  { name: 'cpu', concurrency: envNumber('HASHLOCK_TEST_CPU_LANE', CORES), perProcess: envNumber('HASHLOCK_TEST_FILES_PER_PROCESS', 6), match: /./ },
];

/** The quick lane: unit and store tests that start no node. */
const QUICK = /^test\/([^/]+\.test\.ts|store\/|orders\/|pricing\/|config\/|events\/(?!service-streams)|webhooks\/(signature|addresses|outbox)|api\/(schemas|envelope|bad-input|error-codes|strict-input|fuzz|reads|order-list))/;

/**
 * Files that start first in their lane: the longest, so that the lane does not end on one of them
 * alone. The rest follow in path order.
 */
const FIRST = [
  'test/e2e/chaos.test.ts',
  'test/e2e/node-outage-families.test.ts',
  'test/e2e/node-outage.test.ts',
  'test/e2e/database-loss.test.ts',
  'test/e2e/solver-process-families.test.ts',
];

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const named = args.filter((a) => !a.startsWith('--')).map((f) => relative(process.cwd(), f));
const all = named.length > 0 ? named : findTests('test').sort();
const files = quick ? all.filter((f) => QUICK.test(f)) : all;
const checks = named.length === 0 && !quick && !args.includes('--no-checks');

const order = (a, b) => {
  const [ia, ib] = [FIRST.indexOf(a), FIRST.indexOf(b)].map((i) => (i < 0 ? FIRST.length : i));
  return ia - ib || a.localeCompare(b);
};
const lanes = LANES.map((lane) => ({ ...lane, files: [] }));
for (const file of files) lanes.find((lane) => lane.match.test(file)).files.push(file);

if (args.includes('--list')) {
  for (const lane of lanes) console.log(`${lane.name} (${lane.concurrency} at once): ${lane.files.length} files\n  ${lane.files.sort(order).join('\n  ')}`);
  process.exit(0);
}

const started = Date.now();
await compileTests();
/** Where a test file's compiled JavaScript is. */
const compiled = (file) => join(COMPILED, file.replace(/\.ts$/, '.js'));
/** The test file a compiled path (or a source path) names, relative to the repository. */
const sourceOf = (path) => relative(process.cwd(), path.startsWith(COMPILED) ? join(process.cwd(), relative(COMPILED, path).replace(/\.js$/, '.ts')) : path);
const groupDir = mkdtempSync(join(tmpdir(), 'hashlock-test-groups-'));

/**
 * What a lane hands node's runner: its files, `perProcess` at a time in a generated file that imports
 * each under a suite named by its path (a test's own location in the report stays its file's).
 */
function processFiles(lane) {
  const sorted = [...lane.files].sort(order);
  if (lane.perProcess <= 1) return sorted.map(compiled);
  const count = Math.ceil(sorted.length / lane.perProcess);
  // Dealt round-robin, so that every process gets a share of the slow files and the fast ones.
  const groups = Array.from({ length: count }, (_, i) => sorted.filter((_f, j) => j % count === i));
  return groups.map((group, i) => {
    if (group.length === 1) return compiled(group[0]);
    const path = join(groupDir, `${lane.name}-${String(i + 1).padStart(2, '0')}.test.mjs`);
    const entries = group.map((f) => [f, pathToFileURL(compiled(f)).href]);
    writeFileSync(
      path,
      `import { describe } from 'node:test';\nfor (const [name, url] of ${JSON.stringify(entries)}) describe(name, () => import(url));\n`,
    );
    return path;
  });
}

/** Lint and the type-check, beside the tests at a lower priority; their output is kept for the end. */
function check(name, command, commandArgs) {
  return new Promise((done) => {
    const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      setPriority(child.pid, 10);
    } catch {
      // not allowed here: it runs at the tests' priority
    }
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => done({ name, ok: false, output: String(err), ms: Date.now() - started }));
    child.on('close', (code) => done({ name, ok: code === 0, output, ms: Date.now() - started }));
  });
}
const bin = (pkg, path) => join('node_modules', pkg, path);
const checking = checks
  ? [
      check('lint', process.execPath, [bin('eslint', 'bin/eslint.js'), '--max-warnings', '0', '.']),
      check('type-check', process.execPath, [bin('typescript', 'bin/tsc'), '--noEmit', '-p', 'tsconfig.json']),
    ]
  : [];

// Every lane's events go to one spec reporter. Each lane ends with its own summary (`tests N`,
// `pass N`, ...); those are summed into one.
const report = new PassThrough({ objectMode: true });
const printed = report.pipe(new spec());
printed.pipe(process.stdout, { end: false });
const SUMMED = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];
const totals = new Map();
const fileTimes = [];
const running = lanes
  .filter((lane) => lane.files.length > 0)
  .map(
    (lane) =>
      new Promise((done) => {
        const stream = run({ files: processFiles(lane), concurrency: lane.concurrency });
        stream.on('data', (event) => {
          const { data } = event;
          if (event.type === 'test:diagnostic' && data.nesting === 0 && data.file === undefined) {
            const [key, value] = data.message.split(' ');
            if (SUMMED.includes(key) && /^[0-9]+$/.test(value)) return void totals.set(key, (totals.get(key) ?? 0) + Number(value));
            if (key === 'duration_ms') return;
          }
          // A file's end: the file itself when it runs alone, its suite when it shares a process.
          if (event.type === 'test:complete' && data.nesting === 0 && /\.test\.[jt]s$/.test(data.name)) {
            fileTimes.push({ file: sourceOf(data.name), ms: data.details.duration_ms, lane: lane.name });
          }
          report.write(event);
        });
        stream.on('end', done);
      }),
  );
await Promise.all(running);
for (const [key, value] of [...totals].sort(([a], [b]) => SUMMED.indexOf(a) - SUMMED.indexOf(b))) report.write({ type: 'test:diagnostic', data: { nesting: 0, message: `${key} ${value}` } });
report.write({ type: 'test:diagnostic', data: { nesting: 0, message: `duration_ms ${Date.now() - started}` } });
report.end();
// The reporter's last words (the failed tests again) come with its end; the timer keeps the process
// alive meanwhile, and caps the wait should that end not come.
let capped;
await Promise.race([once(printed, 'end'), new Promise((resolve) => (capped = setTimeout(resolve, 10_000)))]);
clearTimeout(capped);
rmSync(groupDir, { recursive: true, force: true });
const checked = await Promise.all(checking);

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log('\nthe ten slowest files:');
for (const { file, ms, lane } of fileTimes.sort((a, b) => b.ms - a.ms).slice(0, 10)) {
  console.log(`  ${seconds(ms).padStart(8)}  ${file} (${lane})`);
}
for (const { name, ok, output, ms } of checked) {
  if (!ok) console.log(`\n${name} failed:\n${output.trimEnd()}`);
  else console.log(`${name}: passed (finished ${seconds(ms)} after the start)`);
}
console.log(`\n${files.length} files in ${seconds(Date.now() - started)}`);
const failed = (totals.get('fail') ?? 0) > 0 || (totals.get('cancelled') ?? 0) > 0 || checked.some((c) => !c.ok) || totals.size === 0;
process.exit(failed ? 1 : 0);
