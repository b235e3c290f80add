// Settlement at scale as users meet it: `hashlock dev` in its own process (every local chain it can
// run, anvil mining a block a second), on PostgreSQL or on its embedded PGlite, and N clients in this
// process that start gasless WBTC swaps (ethereum_localnet -> arbitrum_localnet) all at once. Each
// client creates its order, signs the EIP-712 initiate, PATCHes it and follows its order through
// `GET /v2/orders/{id}/events` until `completed`, as docs/api.md recommends. The bench's app has its
// own rate limit (`hashlock apps create --rate-limit`), as an integrator serving many users would.
// Reported: swaps/s and the first / median / last completion; `GET /v2/orders/{id}` latency (p50,
// p99) from 16 readers on their own thread while the swaps run; the service's resident memory once started, at its peak
// during the run and `BENCH_SCALE_SETTLE_SECONDS` after it; with `BENCH_PROFILE=<dir>`, the service's
// CPU profile and its top functions by self time.
// With `steady`, swaps arrive at a steady rate instead (after five alone, the floor as measured), and
// what the service adds to each is seen from the chains (bench/chain-observer.ts).
// Run alone: BENCH_SCALE_SWAPS=1000 node --import tsx bench/scale.ts; a steady stream of 20 a second
// for 60 s: BENCH_SCALE_RATE=20 BENCH_SCALE_SECONDS=60. BENCH_SCALE_RUNS runs the burst several times
// on one service; BENCH_SCALE_SETTLE_SECONDS is the wait before memory is read after each;
// BENCH_NODE_FLAGS passes node flags to the service process (V8 heap settings, say).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PACKAGE_ROOT } from '../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../src/localnet/accounts.ts';
import type { StoreKind } from '../src/store/database.ts';
import { signGaslessInitiate } from '../test/helpers/gasless.ts';
import { SseClient } from '../test/helpers/sse.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { hex0x, observeChain, serviceLatencies, stepBlocks } from './chain-observer.ts';
import { OrderReaders } from './order-readers.ts';
import { cpuBetween, cpuSnapshot } from './process-cpu.ts';
import { quantile, rssMb, type Row } from './stats.ts';
import { wbtcOrderBody } from './wbtc-order.ts';

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');
const AMOUNT = 10_000n;
const READERS = 16;
const SWAP_TIMEOUT_MS = 300_000;


/** Where the service's memory is, from its /metrics: V8 heap used, memory outside the heap (buffers, WASM), in MB. */
async function memoryBreakdown(apiUrl: string): Promise<string> {
  try {
    const text = await (await fetch(`${apiUrl}/metrics`)).text();
    const metric = (name: string) => Number(new RegExp(`^hashlock_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
    return `heap used ${metric('nodejs_heap_size_used_bytes').toFixed(0)} of ${metric('nodejs_heap_size_total_bytes').toFixed(0)} MB, external ${metric('nodejs_external_memory_bytes').toFixed(0)} MB`;
  } catch (err) {
    return `no /metrics (${(err as Error).message})`;
  }
}

/** The service's event-loop delay since the last scrape (prom-client resets it on each): p99 and max in ms. */
async function loopDelay(apiUrl: string): Promise<{ p99: number; max: number } | undefined> {
  try {
    const text = await (await fetch(`${apiUrl}/metrics`)).text();
    const metric = (name: string) => Number(new RegExp(`^hashlock_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
    return { p99: metric('p99'), max: metric('max') };
  } catch {
    return undefined;
  }
}

/**
 * The service's own timing of `GET /v2/orders/{id}` (its request-duration histogram: from the request
 * read to the answer sent), as the bucket its p99 falls in: what the handler costs, without the wait
 * for the event loop before the request is read.
 */
async function serverSideOrderReads(apiUrl: string): Promise<string> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const buckets = [...text.matchAll(/^hashlock_http_request_duration_seconds_bucket\{le="([^"]+)",method="GET",route="\/v2\/orders\/:order",status_code="200"\} (\d+)$/gm)].map((m) => ({
    le: m[1] === '+Inf' ? Infinity : Number(m[1]) * 1000,
    count: Number(m[2]),
  }));
  const total = buckets.at(-1)?.count ?? 0;
  const p99 = buckets.find((b) => b.count >= total * 0.99);
  const p50 = buckets.find((b) => b.count >= total * 0.5);
  return total === 0 ? 'no reads counted' : `${total} reads: p50 <= ${p50?.le} ms, p99 <= ${p99?.le} ms`;
}

/** A failed swap's error with its causes (fetch's "fetch failed" says nothing without them). */
const describeFailure = (err: unknown): string => {
  const parts: string[] = [];
  for (let e = err; e instanceof Error && parts.length < 4; e = e.cause) parts.push(`${e.message}${(e as { code?: string }).code ? ` (${(e as { code?: string }).code})` : ''}`);
  return parts.join(' <- ') || String(err);
};

type PassBuckets = Map<string, { buckets: Array<{ le: number; count: number }>; sum: number }>;

/** Every worker's pass-duration histogram (hashlock_worker_pass_seconds) as /metrics shows it now. */
async function workerPasses(apiUrl: string): Promise<PassBuckets> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const byWorker: PassBuckets = new Map();
  for (const m of text.matchAll(/^hashlock_worker_pass_seconds_bucket\{le="([^"]+)",worker="([^"]+)"\} (\d+)$/gm)) {
    const entry = byWorker.get(m[2]!) ?? { buckets: [], sum: 0 };
    entry.buckets.push({ le: m[1] === '+Inf' ? Infinity : Number(m[1]) * 1000, count: Number(m[3]) });
    byWorker.set(m[2]!, entry);
  }
  for (const m of text.matchAll(/^hashlock_worker_pass_seconds_sum\{worker="([^"]+)"\} (\S+)$/gm)) {
    const entry = byWorker.get(m[1]!);
    if (entry) entry.sum = Number(m[2]) * 1000;
  }
  return byWorker;
}

/** Between two readings, per worker matching `pattern`: passes, mean, and the buckets of p50 and p95 (ms). */
function passesBetween(before: PassBuckets, after: PassBuckets, pattern: RegExp): string {
  return [...after]
    .filter(([worker]) => pattern.test(worker))
    .map(([worker, { buckets, sum }]) => {
      const was = before.get(worker);
      const counts = buckets.map((b, i) => ({ le: b.le, count: b.count - (was?.buckets[i]?.count ?? 0) }));
      const total = counts.at(-1)?.count ?? 0;
      const at = (q: number) => counts.find((b) => b.count >= total * q)?.le;
      return `${worker}: ${total} passes, mean ${((sum - (was?.sum ?? 0)) / Math.max(total, 1)).toFixed(1)} ms, p50 <= ${at(0.5)} ms, p95 <= ${at(0.95)} ms`;
    })
    .join('\n');
}

interface Devnet {
  api_url: string;
  app_key: string;
  chains: Record<string, { rpc_url: string; contracts: { wbtc: Address; wbtcHtlc: Address } }>;
}

export interface ScaleOptions {
  /** Swaps started at once in each run. */
  swaps: number;
  kind: StoreKind;
  /** How long after each run the memory is read. */
  settleSeconds: number;
  runs?: number;
  /** A steady arrival of swaps instead of bursts. */
  steady?: { rate: number; seconds: number };
  profileDir?: string;
  /** Readers timing `GET /v2/orders/{id}` in a tight loop while a burst runs (default 16; 0: none). */
  readers?: number;
}

export async function benchScale(options: ScaleOptions): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-scale-'));
  const database = options.kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_scale') : undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', HASHLOCK_SECRET_KEY: randomBytes(32).toString('hex') };
  if (database) env.DATABASE_URL = database.url;
  else delete env.DATABASE_URL;

  // The integrator's app: one key for all its users, with a limit that fits them.
  const app = spawnSync(process.execPath, [BIN, 'apps', 'create', '--name', 'bench integrator', '--gasless', '--rate-limit', '1000000/10s'], { env, encoding: 'utf8' });
  if (app.status !== 0) throw new Error(`apps create: ${app.stderr}`);
  const appKey = /^([0-9a-f]{64})$/m.exec(app.stdout)![1]!;

  if (options.profileDir) mkdirSync(options.profileDir, { recursive: true });
  const nodeArgs = [...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []), ...(process.env.BENCH_HEAP_SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2'] : []), ...(process.env.BENCH_EXTRA_IMPORT ? ['--import', process.env.BENCH_EXTRA_IMPORT] : []), ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])];
  let output = '';
  const dev = spawn(process.execPath, [...nodeArgs, BIN, 'dev'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout.on('data', (d: Buffer) => (output += d.toString()));
  dev.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const stopDev = async () => {
    if (dev.exitCode !== null) return;
    const exited = new Promise((r) => dev.once('exit', r));
    dev.kill('SIGINT');
    await exited;
  };
  try {
    for (const deadline = Date.now() + 180_000; !(output.includes('API key') && existsSync(join(dataDir, 'devnet.json'))); ) {
      if (dev.exitCode !== null || Date.now() > deadline) throw new Error(`hashlock dev did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const devnet = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as Devnet;
    const pid = dev.pid!;
    const call = async (path: string, init?: { method: string; body: object }): Promise<any> => {
      const res = await fetch(`${devnet.api_url}${path}`, {
        method: init?.method ?? 'GET',
        headers: { 'service-app-id': appKey, 'content-type': 'application/json' },
        ...(init ? { body: JSON.stringify(init.body) } : {}),
      });
      const body = (await res.json()) as { result?: any; error?: string };
      if (!res.ok || body.result === undefined) throw new Error(`${path}: ${res.status} ${body.error}`);
      return body.result;
    };

    const user = privateKeyToAccount(privateKeyOf(devAccount('user')));
    const eth = devnet.chains.ethereum_localnet!;
    const client = createPublicClient({ transport: http(eth.rpc_url) });
    const wallet = createWalletClient({ account: user, transport: http(eth.rpc_url) });
    await client.waitForTransactionReceipt({
      hash: await wallet.writeContract({ chain: null, address: eth.contracts.wbtc, abi: erc20Abi, functionName: 'approve', args: [eth.contracts.wbtcHtlc, maxUint256] }),
    });
    // A started service at rest: its memory before any swap.
    await new Promise((r) => setTimeout(r, 10_000));
    const idleMb = rssMb(pid);
    const idleParts = await memoryBreakdown(devnet.api_url);

    const quote = (await call(`/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${AMOUNT}`)) as Array<{ destination: { amount: string } }>;
    const destinationAmount = quote[0]!.destination.amount;
    const readerCount = options.readers ?? READERS;
    const note = `${options.kind}; hashlock dev in its own process, 1 s EVM blocks; clients follow the event streams${readerCount > 0 ? `, ${readerCount} readers poll orders meanwhile` : ''}`;
    const rows: Row[] = [{ measure: 'the service process resident memory once started', result: `${idleMb.toFixed(0)} MB (${idleParts})`, note }];

    /**
     * One client's gasless swap: it creates its order, opens the order's event stream, signs and
     * PATCHes the initiate, and waits for `completed` on the stream. Times in performance.now() ms.
     */
    const swap = async (readers?: OrderReaders): Promise<{ startedAt: number; createdAt: number; streamAt: number; initiatedAt: number; doneAt: number; source: string; destination: string }> => {
      const startedAt = performance.now();
      const created = await call('/v2/orders', { method: 'POST', body: wbtcOrderBody(user.address, AMOUNT, destinationAmount) });
      const createdAt = performance.now();
      const id = created.order_id as string;
      readers?.add(id);
      const stream = await SseClient.open(`${devnet.api_url}/v2/orders/${id}/events`, { 'service-app-id': appKey });
      try {
        if (stream.response.statusCode !== 200) throw new Error(`events of ${id}: ${stream.response.statusCode} ${await stream.text()}`);
        const streamAt = performance.now();
        await call(`/v2/orders/${id}?action=initiate`, { method: 'PATCH', body: { signature: await signGaslessInitiate(user, created.typed_data) } });
        const initiatedAt = performance.now();
        await stream.until(() => stream.events.some((e) => e.data.includes('"status":"completed"')), SWAP_TIMEOUT_MS, `order ${id} to complete`);
        const completed = stream.data<{ status: string; order: { source_swap: { swap_id: string }; destination_swap: { swap_id: string } } }>().find((e) => e.status === 'completed')!;
        return { startedAt, createdAt, streamAt, initiatedAt, doneAt: performance.now(), source: hex0x(completed.order.source_swap.swap_id), destination: hex0x(completed.order.destination_swap.swap_id) };
      } finally {
        stream.close();
      }
    };

    const CLIENT_STEPS = { createdAt: 'order created', streamAt: 'its event stream open', initiatedAt: 'initiate accepted' } as const;
    /** One burst of `options.swaps` swaps at once, then the settle time; its rows. */
    const burst = async (run: string): Promise<Row[]> => {
      let peakMb = rssMb(pid);
      let peakParts = '';
      const memory = setInterval(() => {
        const now = rssMb(pid) || 0;
        if (now > peakMb) {
          peakMb = now;
          void memoryBreakdown(devnet.api_url).then((parts) => (peakParts = parts));
        }
      }, 250);
      const readers = readerCount > 0 ? new OrderReaders({ apiUrl: devnet.api_url, appKey, readers: readerCount }) : undefined;

      const sides = (['ethereum_localnet', 'arbitrum_localnet'] as const).map((key) => {
        const chain = devnet.chains[key]!;
        return { chain, client: createPublicClient({ transport: http(chain.rpc_url) }) };
      });
      const fromBlocks = await Promise.all(sides.map((side) => side.client.getBlockNumber()));
      const settled: Array<Awaited<ReturnType<typeof swap>>> = [];
      const started = performance.now();
      const swapSeconds = async () => {
        const done = await swap(readers);
        settled.push(done);
        return done.doneAt - started;
      };
      const delays: Array<{ p99: number; max: number }> = [];
      const lagSampler = setInterval(() => void loopDelay(devnet.api_url).then((d) => d && delays.push(d)), 1_000);
      const results = await Promise.allSettled(Array.from({ length: options.swaps }, swapSeconds));
      const wall = (performance.now() - started) / 1000;
      clearInterval(lagSampler);
      const reads = (await readers?.stop()) ?? [];
      clearInterval(memory);
      const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value / 1000] : []));
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const serverSide = await serverSideOrderReads(devnet.api_url).catch((err: unknown) => `no /metrics (${(err as Error).message})`);
      const [source, destination] = sides.map((side, i) => ({ client: side.client, htlc: side.chain.contracts.wbtcHtlc, fromBlock: fromBlocks[i]! }));
      const steps = await stepBlocks(settled, source!, destination!);
      const spread = Object.entries(steps)
        .map(([step, blocks]) => `${step} ${Math.min(...blocks)}/${quantile(blocks, 0.5)}/${Math.max(...blocks)}`)
        .join('; ');
      await new Promise((r) => setTimeout(r, options.settleSeconds * 1000));
      if (process.env.BENCH_HEAP_SNAPSHOT) process.kill(pid, 'SIGUSR2');
      const afterMb = rssMb(pid);
      const afterParts = await memoryBreakdown(devnet.api_url);
      if (process.env.BENCH_HEAP_SNAPSHOT) await new Promise((r) => setTimeout(r, 20_000)); // the snapshot is written
      return [
        {
          measure: `${run}${options.swaps} gasless swaps at once`,
          result: `${done.length}/${options.swaps} completed, ${(done.length / wall).toFixed(1)} swaps/s; first ${Math.min(...done).toFixed(1)} s, median ${quantile(done, 0.5).toFixed(1)} s, last ${Math.max(...done).toFixed(1)} s${failure ? `; ${results.length - done.length} failed, the first: ${describeFailure(failure.reason)}` : ''}`,
          note,
        },
        {
          measure: `${run}the clients' requests, from the burst's start (first/median/last)`,
          result: (['createdAt', 'streamAt', 'initiatedAt'] as const).map((k) => `${CLIENT_STEPS[k]} ${[0.01, 0.5, 1].map((q) => (quantile(settled.map((d) => d[k] - started), q) / 1000).toFixed(2)).join('/')} s`).join('; '),
          note,
        },
        { measure: `${run}each step's block, counted from the block the burst started in (first/median/last)`, result: spread, note },
        ...(readers ? [{ measure: `${run}GET /v2/orders/{id} while they run (${readerCount} readers)`, result: `${reads.length} reads, p50 ${quantile(reads, 0.5).toFixed(1)} ms, p99 ${quantile(reads, 0.99).toFixed(1)} ms`, note }] : []),
        { measure: `${run}the order reads as the service timed them, since it started (its request-duration histogram)`, result: serverSide, note },
        {
          measure: `${run}the service's event-loop delay while they run (per second)`,
          result: `p99 of each second: median ${quantile(delays.map((d) => d.p99), 0.5).toFixed(0)} ms, worst ${Math.max(...delays.map((d) => d.p99)).toFixed(0)} ms; longest stall ${Math.max(...delays.map((d) => d.max)).toFixed(0)} ms`,
          note,
        },
        { measure: `${run}the service process resident memory`, result: `${peakMb.toFixed(0)} MB peak (${peakParts}), ${afterMb.toFixed(0)} MB ${options.settleSeconds} s after (${afterParts})`, note },
      ];
    };
    /**
     * A steady arrival of `rate` swaps a second for `seconds`, after a few swaps alone (the floor as
     * measured); each swap's completion and what the service adds to it, seen from the chains.
     */
    const steady = async ({ rate, seconds }: { rate: number; seconds: number }): Promise<Row[]> => {
      const sides = (['ethereum_localnet', 'arbitrum_localnet'] as const).map((key) => {
        const chain = devnet.chains[key]!;
        return { key, chain, client: createPublicClient({ transport: http(chain.rpc_url) }), observer: observeChain(chain.rpc_url.replace(/^http/, 'ws')) };
      });
      const [source, destination] = sides as [(typeof sides)[0], (typeof sides)[0]];
      try {
        const fromBlocks = await Promise.all(sides.map((side) => side.client.getBlockNumber()));
        const alone: Array<Awaited<ReturnType<typeof swap>>> = [];
        for (let i = 0; i < 5; i++) alone.push(await swap());
        const delays: Array<{ p99: number; max: number }> = [];
        const lagSampler = setInterval(() => void loopDelay(devnet.api_url).then((d) => d && delays.push(d)), 1_000);
        const passesBefore = await workerPasses(devnet.api_url);
        const cpuBefore = cpuSnapshot(pid);
        const started = performance.now();
        const swaps: Array<ReturnType<typeof swap>> = [];
        for (let i = 0; i < rate * seconds; i++) {
          const due = started + (i * 1000) / rate;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
          swaps.push(swap());
        }
        const results = await Promise.allSettled(swaps);
        const cpu = cpuBetween(cpuBefore, cpuSnapshot(pid), (performance.now() - started) / 1000);
        clearInterval(lagSampler);
        const passes = passesBetween(passesBefore, await workerPasses(devnet.api_url), /^(watcher:(ethereum|arbitrum)_localnet|solver:|order-events|engine:(ethereum|arbitrum)_localnet:(solver|relayer)$)/);
        const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        const durations = done.map((d) => d.doneAt - d.startedAt);
        const added = (swaps: typeof done) =>
          serviceLatencies(
            swaps,
            { ...source, htlc: source.chain.contracts.wbtcHtlc, fromBlock: fromBlocks[0]! },
            { ...destination, htlc: destination.chain.contracts.wbtcHtlc, fromBlock: fromBlocks[1]! },
          );
        const { a, b } = await added(done);
        const one = await added(alone);
        const aloneMs = alone.map((d) => d.doneAt - d.startedAt);
        const ms = (x: number) => `${Math.round(x)} ms`;
        return [
          {
            measure: 'one swap alone (5 in a row): creation -> completed; (a); (b)',
            result: `median ${ms(quantile(aloneMs, 0.5))}, max ${ms(Math.max(...aloneMs))}; (a) median ${ms(quantile(one.a, 0.5))}; (b) median ${ms(quantile(one.b, 0.5))}`,
            note,
          },
          {
            measure: `${rate} swaps/s for ${seconds} s: creation -> completed`,
            result: `${done.length}/${rate * seconds} completed; p50 ${ms(quantile(durations, 0.5))}, p95 ${ms(quantile(durations, 0.95))}, max ${ms(Math.max(...durations))} (floor of four 1 s blocks plus one: 5000 ms)${failure ? `; ${results.length - done.length} failed, the first: ${describeFailure(failure.reason)}` : ''}`,
            note,
          },
          { measure: '(a) source confirmed -> destination initiate sent', result: `p50 ${ms(quantile(a, 0.5))}, p95 ${ms(quantile(a, 0.95))}`, note },
          { measure: '(b) secret revealed -> source redeem sent', result: `p50 ${ms(quantile(b, 0.5))}, p95 ${ms(quantile(b, 0.95))}`, note },
          { measure: 'the passes of the workers a swap goes through, meanwhile (hashlock_worker_pass_seconds)', result: passes, note },
          { measure: `CPU meanwhile, as a share of one core (the machine has ${availableParallelism()})`, result: cpu, note },
          {
            measure: "the service's event-loop delay meanwhile (per second)",
            result: `p99 of each second: median ${quantile(delays.map((d) => d.p99), 0.5).toFixed(0)} ms, worst ${Math.max(...delays.map((d) => d.p99)).toFixed(0)} ms`,
            note,
          },
        ];
      } finally {
        for (const side of sides) side.observer.stop();
      }
    };

    if (options.steady) rows.push(...(await steady(options.steady)));
    const runs = options.steady ? 0 : (options.runs ?? 1);
    for (let run = 1; run <= runs; run++) rows.push(...(await burst(runs > 1 ? `run ${run} of ${runs}: ` : '')));
    await stopDev();
    if (options.profileDir) rows.push({ measure: 'CPU profile: top self time', result: topFunctions(options.profileDir), note: options.profileDir });
    return rows;
  } finally {
    await stopDev();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** The functions with the most self time in the newest profile of `dir` (excluding idle), as "name (file) %". */
export function topFunctions(dir: string, n = 15): string {
  // The main thread's profile is the largest (tsx's loader thread writes one too).
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (!file) return 'no profile written';
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
  const self = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    const where = url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/src\//, 'src/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1)}% ${k}`)
    .join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const swaps = Number(process.env.BENCH_SCALE_SWAPS ?? 1000);
  const kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite';
  const rows = await benchScale({
    swaps,
    kind,
    settleSeconds: Number(process.env.BENCH_SCALE_SETTLE_SECONDS ?? 300),
    runs: Number(process.env.BENCH_SCALE_RUNS ?? 1),
    ...(process.env.BENCH_PROFILE ? { profileDir: process.env.BENCH_PROFILE } : {}),
    ...(process.env.BENCH_SCALE_READERS ? { readers: Number(process.env.BENCH_SCALE_READERS) } : {}),
    ...(process.env.BENCH_SCALE_RATE ? { steady: { rate: Number(process.env.BENCH_SCALE_RATE), seconds: Number(process.env.BENCH_SCALE_SECONDS ?? 60) } } : {}),
  });
  for (const row of rows) console.log(`${row.measure}:\n${row.result}\n`);
}
