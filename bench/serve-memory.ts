// The memory target of the scale issue, measured as an operator runs the service: `hashlock serve`
// on PostgreSQL with three chains, at most 200 MB resident. `hashlock dev` runs the local chains in its
// own process (on its own PGlite, in a temporary data dir); a service config names three of them
// (ethereum_localnet and arbitrum_localnet as their anvils, litecoin_localnet as its litecoind with the
// cookie file dev gives it), with the dev config's registry, prices, solver and strategies, and the
// dev accounts' keys in the environment; `hashlock serve --config <it>` then runs in its own process
// on a fresh PostgreSQL database. Reported: its resident memory (VmRSS) 10 s and 60 s after start at
// rest and after a small load (GET /v2/quote and GET /v2/orders/{id}), each with the V8 heap and the
// memory outside it from /metrics; the passes its chain watchers made meanwhile; and, for where the
// memory goes, the RSS of idle Node processes: bare; with the service's modules imported but nothing
// started, compiled (dist/, as bin/hashlock.js runs them once built) and through tsx (as it runs the
// sources without a build). Which of the two serve ran is in the note.
// Run alone: DATABASE_URL=postgres://... node --import tsx bench/serve-memory.ts. BENCH_SERVE_BIN names
// another script to run `serve` with.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Address } from 'viem';
import { PACKAGE_ROOT, type ServiceConfigFile } from '../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../src/localnet/accounts.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { quantile, rssMb, type Row } from './stats.ts';
import { wbtcOrderBody } from './wbtc-order.ts';
import { compiledIsCurrent } from '../bin/compiled.js';

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');
/** The memory target of the scale issue, in MB. */
const TARGET_MB = 200;
const CHAINS = ['ethereum_localnet', 'arbitrum_localnet', 'litecoin_localnet'] as const;
const QUOTES = 100;
const ORDERS = 20;
const ORDER_READS = 100;
const CONCURRENCY = 8;


/** The service's /metrics text, or undefined when it does not answer. */
async function metricsText(apiUrl: string): Promise<string | undefined> {
  try {
    return await (await fetch(`${apiUrl}/metrics`)).text();
  } catch {
    return undefined;
  }
}

/** Where the service's memory is, from its /metrics: V8 heap used and total, memory outside the heap (buffers, WASM), in MB. */
function memoryBreakdown(text: string | undefined): string {
  if (text === undefined) return 'no /metrics';
  const metric = (name: string) => Number(new RegExp(`^hashlock_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return `heap used ${metric('nodejs_heap_size_used_bytes').toFixed(0)} of ${metric('nodejs_heap_size_total_bytes').toFixed(0)} MB, external ${metric('nodejs_external_memory_bytes').toFixed(0)} MB`;
}

/** Passes of each worker so far (the count of hashlock_worker_pass_seconds), by lease name. */
function workerPassCounts(text: string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of (text ?? '').matchAll(/^hashlock_worker_pass_seconds_count\{worker="([^"]+)"\} (\d+)$/gm)) counts.set(m[1]!, Number(m[2]));
  return counts;
}

/** A child process whose output is kept, and a clean stop: SIGINT, then its exit awaited (SIGKILL after 30 s). */
function launch(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; stop: () => Promise<void> } {
  let output = '';
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  };
  return { child, output: () => output, stop };
}

async function waitFor(what: string, ready: () => boolean | Promise<boolean>, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await ready()); ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${what} did not start:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The resident memory of an idle Node process running `args` once it prints `ready` and settles 3 s, in MB. */
async function idleNodeRss(args: string[]): Promise<number> {
  const node = launch(args, { ...process.env, NODE_OPTIONS: '' });
  try {
    await waitFor(`node ${args.join(' ')}`, () => node.output().includes('ready'), node.child, node.output, 60_000);
    await new Promise((r) => setTimeout(r, 3_000));
    return rssMb(node.child.pid!);
  } finally {
    node.child.kill('SIGKILL');
    await new Promise((r) => (node.child.exitCode !== null || node.child.signalCode !== null ? r(undefined) : node.child.once('exit', r)));
  }
}

/** Runs `task` over `items`, `CONCURRENCY` at once; each task's duration in ms. */
async function timedPool<T>(items: T[], task: (item: T) => Promise<void>): Promise<number[]> {
  const durations: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const started = performance.now();
        await task(item);
        durations.push(performance.now() - started);
      }
    }),
  );
  return durations;
}

interface Devnet {
  api_url: string;
  chains: Record<string, { rpc_url: string; rpc_cookie_file?: string; contracts?: { feeClaim?: Address } }>;
}

/** The service config for the three chains of the devnet, from the dev config's registry, prices, solver and strategies. */
function serveConfig(devnet: Devnet): ServiceConfigFile {
  const dev = JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'config/hashlock.dev.json'), 'utf8')) as ServiceConfigFile;
  const ours = (asset: string) => CHAINS.some((chain) => asset.startsWith(`${chain}:`));
  const list = (assets: string | string[]) => (Array.isArray(assets) ? assets : [assets]).filter(ours);
  const relayer = devAccount('relayer').address;
  const chains: NonNullable<ServiceConfigFile['chains']> = {};
  for (const key of CHAINS) {
    const record = devnet.chains[key];
    if (!record) throw new Error(`hashlock dev runs no ${key} (is litecoind on the PATH?)`);
    chains[key] = record.rpc_cookie_file
      ? { rpc_url: record.rpc_url, rpc_cookie_file: record.rpc_cookie_file }
      : { rpc_url: record.rpc_url, ws_url: record.rpc_url.replace(/^http/, 'ws'), relayer, ...(record.contracts?.feeClaim ? { fee_claim: record.contracts.feeClaim } : {}) };
  }
  return {
    registry: resolve(PACKAGE_ROOT, 'config/registry.localnet.json'),
    prices: dev.prices!,
    // The solver's addresses and the strategies on these three chains only, as an operator of three would write them.
    solvers: dev.solvers!.map((s) => ({ ...s, addresses: Object.fromEntries(Object.entries(s.addresses).filter(([chain]) => (CHAINS as readonly string[]).includes(chain))) })),
    strategies: dev.strategies!.flatMap((s) => {
      const from = list(s.from);
      const to = list(s.to);
      return from.length > 0 && to.length > 0 ? [{ ...s, from, to }] : [];
    }),
    affiliate_fee_assets: dev.affiliate_fee_assets!,
    order_cache_ms: dev.order_cache_ms!,
    chains,
  };
}

export async function benchServeMemory(): Promise<Row[]> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error('DATABASE_URL is not set: hashlock serve runs on PostgreSQL');
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-serve-memory-'));
  const devDir = join(dataDir, 'dev');
  const serveDir = join(dataDir, 'serve');
  const configPath = join(dataDir, 'hashlock.serve.json');
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'warn' };
  delete base.DATABASE_URL;
  delete base.HASHLOCK_REGISTRY;
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let dev: ReturnType<typeof launch> | undefined;
  let serve: ReturnType<typeof launch> | undefined;
  try {
    // 1. The local chains, as `hashlock dev` runs them (its own service on PGlite beside them).
    dev = launch([BIN, 'dev'], { ...base, HASHLOCK_DATA_DIR: devDir });
    const devnetFile = join(devDir, 'devnet.json');
    await waitFor('hashlock dev', () => dev!.output().includes('API key') && existsSync(devnetFile), dev.child, dev.output, 180_000);
    const devnet = JSON.parse(readFileSync(devnetFile, 'utf8')) as Devnet;

    // 2. The operator's config and keys.
    writeFileSync(configPath, `${JSON.stringify(serveConfig(devnet), null, 2)}\n`);
    database = await createDatabase(baseUrl, 'hashlock_serve_memory');
    const env: NodeJS.ProcessEnv = {
      ...base,
      DATABASE_URL: database.url,
      HASHLOCK_DATA_DIR: serveDir,
      HASHLOCK_SECRET_KEY: randomBytes(32).toString('hex'),
      HASHLOCK_RELAYER_KEY: privateKeyOf(devAccount('relayer')),
      HASHLOCK_SOLVER_KEY: privateKeyOf(devAccount('solver')),
      HASHLOCK_FEE_SIGNER_KEY: privateKeyOf(devAccount('feeSigner')),
    };
    const app = spawnSync(process.execPath, [BIN, 'apps', 'create', '--config', configPath, '--name', 'bench serve-memory', '--gasless'], { env, encoding: 'utf8' });
    if (app.status !== 0) throw new Error(`apps create: ${app.stderr}`);
    const appKey = /^([0-9a-f]{64})$/m.exec(app.stdout)![1]!;

    // 3. `hashlock serve`, as the README runs it.
    const serveBin = process.env.BENCH_SERVE_BIN ? resolve(process.env.BENCH_SERVE_BIN) : BIN;
    serve = launch([serveBin, 'serve', '--config', configPath], env);
    const startedAt = Date.now();
    let apiUrl = '';
    await waitFor(
      'hashlock serve',
      async () => {
        apiUrl ||= /listening on (http:\/\/\S+)/.exec(serve!.output())?.[1] ?? '';
        if (!apiUrl) return false;
        try {
          return (await fetch(`${apiUrl}/health`)).ok;
        } catch {
          return false;
        }
      },
      serve.child,
      serve.output,
      120_000,
    );
    const startupMs = Date.now() - startedAt;
    const pid = serve.child.pid!;
    const runs = serveBin !== BIN ? serveBin : compiledIsCurrent() ? 'hashlock serve (compiled, dist/)' : 'hashlock serve (through tsx: dist/ not built)';
    const note = `${runs} on PostgreSQL, ${CHAINS.join(', ')} (hashlock dev's local chains); target ${TARGET_MB} MB`;
    const at = async (seconds: number) => {
      await new Promise((r) => setTimeout(r, Math.max(0, startedAt + seconds * 1000 - Date.now())));
      const rss = rssMb(pid);
      const metrics = await metricsText(apiUrl);
      return { rss, metrics, parts: memoryBreakdown(metrics) };
    };
    const verdict = (mb: number) => `${mb.toFixed(0)} MB (${mb <= TARGET_MB ? 'within' : 'over'} ${TARGET_MB} MB)`;
    const rows: Row[] = [{ measure: 'serve: start to /health answering', result: `${(startupMs / 1000).toFixed(1)} s`, note }];

    // 4. At rest, then after a small load.
    const at10 = await at(10);
    rows.push({ measure: 'serve resident memory 10 s after start, at rest', result: `${verdict(at10.rss)}: ${at10.parts}`, note });
    const at60 = await at(60);
    rows.push({ measure: 'serve resident memory 60 s after start, at rest', result: `${verdict(at60.rss)}: ${at60.parts}`, note });
    const passes = workerPassCounts(at60.metrics);
    const watchers = CHAINS.map((chain) => `watcher:${chain} ${passes.get(`watcher:${chain}`) ?? 0}`);
    const others = [...passes].filter(([worker]) => !worker.startsWith('watcher:')).map(([worker, n]) => `${worker} ${n}`);
    rows.push({ measure: 'serve worker passes in its first 60 s (hashlock_worker_pass_seconds)', result: [...watchers, ...others].join(', '), note });
    const idle = CHAINS.filter((chain) => !passes.get(`watcher:${chain}`));
    if (idle.length > 0) throw new Error(`serve's watchers of ${idle.join(', ')} made no pass in 60 s:\n${serve.output()}`);

    const headers = { 'service-app-id': appKey, 'content-type': 'application/json' };
    const call = async (path: string, init?: { method: string; body: object }): Promise<any> => {
      const res = await fetch(`${apiUrl}${path}`, { method: init?.method ?? 'GET', headers, ...(init ? { body: JSON.stringify(init.body) } : {}) });
      const body = (await res.json()) as { result?: any; error?: string };
      if (!res.ok || body.result === undefined) throw new Error(`${path}: ${res.status} ${body.error}`);
      return body.result;
    };
    const amount = 10_000n;
    const quotePath = `/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${amount}`;
    const quoteMs = await timedPool(Array.from({ length: QUOTES }, (_, i) => i), async () => void (await call(quotePath)));
    const quote = (await call(quotePath)) as Array<{ destination: { amount: string } }>;
    const user = devAccount('user').address;
    const ids: string[] = [];
    await timedPool(Array.from({ length: ORDERS }, (_, i) => i), async () => {
      ids.push((await call('/v2/orders', { method: 'POST', body: wbtcOrderBody(user, amount, quote[0]!.destination.amount) })).order_id as string);
    });
    const readMs = await timedPool(Array.from({ length: ORDER_READS }, (_, i) => ids[i % ids.length]!), async (id) => void (await call(`/v2/orders/${id}`)));
    const loaded = { rss: rssMb(pid), parts: memoryBreakdown(await metricsText(apiUrl)) };
    const settled = await at(Math.ceil((Date.now() - startedAt) / 1000) + 10);
    const ms = (xs: number[]) => `p50 ${quantile(xs, 0.5).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
    rows.push(
      {
        measure: `load: ${QUOTES} GET /v2/quote, ${ORDERS} POST /v2/orders, ${ORDER_READS} GET /v2/orders/{id}, ${CONCURRENCY} at once`,
        result: `quotes ${ms(quoteMs)}; order reads ${ms(readMs)}`,
        note,
      },
      { measure: 'serve resident memory right after the load', result: `${verdict(loaded.rss)}: ${loaded.parts}`, note },
      { measure: 'serve resident memory 10 s after the load', result: `${verdict(settled.rss)}: ${settled.parts}`, note },
    );

    // 5. Both stopped cleanly before the baselines, so that they do not share the two cores.
    await serve.stop();
    if (serve.child.exitCode !== 0) rows.push({ measure: 'serve exit', result: `code ${serve.child.exitCode}, signal ${serve.child.signalCode}`, note: serve.output().slice(-2000) });
    await dev.stop();

    // Where the memory goes: what an idle Node process holds before the service starts anything.
    const here = { cwd: PACKAGE_ROOT };
    const bare = await idleNodeRss(['-e', "console.log('ready'); setInterval(() => {}, 1000)"]);
    const compiled = compiledIsCurrent()
      ? await idleNodeRss(['--input-type=module', '-e', `await import(${JSON.stringify(resolve(here.cwd, 'dist/service.js'))}); console.log('ready'); setInterval(() => {}, 1000)`])
      : undefined;
    const modules = await idleNodeRss([
      '--input-type=module',
      '-e',
      `import { register } from 'tsx/esm/api'; register(); await import(${JSON.stringify(resolve(here.cwd, 'src/service.ts'))}); console.log('ready'); setInterval(() => {}, 1000)`,
    ]);
    rows.push(
      { measure: 'idle node (bare)', result: `${bare.toFixed(0)} MB`, note: 'node -e' },
      { measure: "idle node with the service's modules imported compiled (dist/service.js), nothing started", result: compiled === undefined ? 'dist/ not built (npm run build)' : `${compiled.toFixed(0)} MB`, note: 'the module graph of serve, as bin/hashlock.js runs it once built' },
      { measure: "idle node with the service's modules imported through tsx (src/service.ts), nothing started", result: `${modules.toFixed(0)} MB`, note: 'the module graph of serve, as bin/hashlock.js runs it without a build' },
    );
    return rows;
  } finally {
    await serve?.stop();
    await dev?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await benchServeMemory();
  for (const row of rows) console.log(`${row.measure}:\n${row.result}\n`);
}
