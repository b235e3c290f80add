// `npm run bench`: HTTP throughput and server CPU per request of the API beside bare Fastify routes
// (a small static JSON, and the bytes of an order read), on PGlite and PostgreSQL;
// settlement latency and throughput; a solver pass over 100 orders on a slow RPC; quote latency with
// 0, 1, 5 and 20 registered solvers answering (bench/solver-quotes.ts); 100 swaps at once split across
// two `hashlock solver` wirings (bench/solver-split.ts); the Bitcoin-family
// watcher's cost per block as HTLCs grow; Litecoin <-> EVM settlement on litecoind regtest; the
// Solana watcher's cost per slot as open swaps grow; SOL -> EVM settlement on the Solana localnet;
// Tron USDT -> EVM settlement on the local Tron chain (50 gasless swaps at once, 3 s Tron blocks);
// settlement at scale (bench/scale.ts: 100 swaps at once on PGlite and PostgreSQL, 1,000 at once on
// PostgreSQL three times, with order reads, event-loop delay and the service's memory); the resident
// memory of `hashlock serve` on PostgreSQL with three local chains, at rest and after a small load
// (bench/serve-memory.ts, against the 200 MB target).
// Each target is loaded by a separate autocannon process; numbers go to stdout as a table.
// `BENCH_ONLY=http,scale` runs only the parts named (http, streams, settlement, solver-pass, solver-quotes, solver-split, bitcoin,
// solana, tron, scale, serve-memory); all of them by default.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Fastify from 'fastify';
import { buildApi } from '../src/api/app.ts';
import { loadRegistry } from '../src/chains/registry.ts';
import { PACKAGE_ROOT } from '../src/config/service-config.ts';
import { SecretBox } from '../src/orders/secret-box.ts';
import { StaticPriceSource } from '../src/pricing/price-source.ts';
import { createApp } from '../src/store/apps.ts';
import { migrate, openStore, type Store, type StoreKind } from '../src/store/database.ts';
import { insertOrder } from '../src/store/orders.ts';
import { syncRegistry } from '../src/store/registry-sync.ts';
import { syncSolvers } from '../src/store/solvers.ts';
import { buildStrategies } from '../src/pricing/strategies.ts';
import { setSolverBalance } from '../src/store/solvers.ts';
import { sampleOrder, SOLVER, TEST_STRATEGIES, USER } from '../test/helpers/fixtures.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { benchSettlement } from './settlement.ts';
import { benchSolverPass } from './solver-pass.ts';
import { benchSolverQuotes } from './solver-quotes.ts';
import { benchSolverSplit } from './solver-split.ts';
import { benchBitcoinWatcher } from './bitcoin-watcher.ts';
import { findLitecoind } from '../src/localnet/bitcoin/litecoind.ts';
import { benchLitecoinSettlement } from './litecoin-settlement.ts';
import { clangUnavailable } from '../src/localnet/solana/programs/build.ts';
import { benchSolanaWatcher } from './solana-watcher.ts';
import { benchSolanaSettlement } from './solana-settlement.ts';
import { benchEventStreams } from './event-streams.ts';
import { benchScale } from './scale.ts';
import { benchServeMemory } from './serve-memory.ts';
import { benchTronSettlement } from './tron-settlement.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ORDERS = 1000;

interface LoadResult {
  /** This process's CPU time per request while the load ran, in µs: what serving one costs, whoever is the bottleneck. */
  cpuUsPerRequest: number;
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

const run = promisify(execFile);

/** Loads one target from a separate process; this one keeps serving meanwhile. */
async function load(spec: { url: string; paths: string[]; headers?: Record<string, string>; method?: string; bodyTemplate?: string }): Promise<LoadResult> {
  const cpuBefore = process.cpuUsage();
  const { stdout: out } = await run(
    process.execPath,
    ['--import', 'tsx', resolve(PACKAGE_ROOT, 'bench/load.ts'), JSON.stringify({ ...spec, connections: CONNECTIONS, durationSec: DURATION })],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const cpu = process.cpuUsage(cpuBefore);
  const result = JSON.parse(out) as Omit<LoadResult, 'cpuUsPerRequest'>;
  if (result.total === 0 || result.non2xx > 0 || result.errors > 0) throw new Error(`load on ${spec.paths[0]} had ${result.non2xx} non-2xx and ${result.errors} errors`);
  return { ...result, cpuUsPerRequest: (cpu.user + cpu.system) / result.total };
}

async function openBenchStore(kind: StoreKind): Promise<{ store: Store; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    const store = await openStore({ dataDir: mkdtempSync(join(tmpdir(), 'hashlock-bench-')) });
    await migrate(store.db);
    return { store, drop: () => store.close() };
  }
  const database = await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench');
  const store = await openStore({ databaseUrl: database.url, poolSize: 16 });
  await migrate(store.db);
  return {
    store,
    drop: async () => {
      await store.close();
      await database.drop();
    },
  };
}

async function benchStore(kind: StoreKind, bareUrl: string): Promise<Array<Record<string, string | number>>> {
  const { store, drop } = await openBenchStore(kind);
  const registry = loadRegistry(resolve(PACKAGE_ROOT, 'config/registry.localnet.json'));
  await syncRegistry(store.db, registry);
  await syncSolvers(store.db, [SOLVER]);
  const { app, key } = await createApp(store.db, { name: 'bench', gasless: true });
  await setSolverBalance(store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 10n ** 30n });
  const ids: string[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const order = sampleOrder(app.id);
    await insertOrder(store.db, order);
    ids.push(order.id);
  }
  const prices = new StaticPriceSource({ bitcoin: 95000, 'usd-coin': 1 });
  const secrets = new SecretBox(randomBytes(32));
  const strategies = buildStrategies(TEST_STRATEGIES, [SOLVER], registry);
  const api = await buildApi({ store, registry, prices, secrets, strategies, solvers: [SOLVER], version: 'bench', orderCacheMs: 60_000 });
  const url = await api.listen({ host: '127.0.0.1', port: 0 });
  const uncached = await buildApi({ store, registry, prices, secrets, version: 'bench', orderCacheMs: 0 });
  const uncachedUrl = await uncached.listen({ host: '127.0.0.1', port: 0 });
  const headers = { 'service-app-id': key };
  // Warm-up: each order read once, as a polling client would have done.
  for (const id of ids) {
    await fetch(`${url}/v2/orders/${id}`, { headers });
    await fetch(`${url}/v3/quote/${id}`);
  }
  // The same bytes as an order read, from a bare route: what the body's size alone costs.
  const orderBody = await (await fetch(`${url}/v2/orders/${ids[0]}`, { headers })).text();
  const sameSize = Fastify();
  sameSize.get('/bare', (_request, reply) => reply.type('application/json; charset=utf-8').send(orderBody));
  const sameSizeUrl = await sameSize.listen({ host: '127.0.0.1', port: 0 });
  try {
    const bare = await load({ url: bareUrl, paths: ['/bare'] });
    const targets: Array<[string, LoadResult]> = [
      ['bare Fastify route (static JSON)', bare],
      [`bare Fastify route (an order read's ${orderBody.length} bytes)`, await load({ url: sameSizeUrl, paths: ['/bare'] })],
      ['GET /v2/orders/{id} (cached)', await load({ url, paths: ids.map((id) => `/v2/orders/${id}`), headers })],
      ['GET /v2/orders/{id} (no cache)', await load({ url: uncachedUrl, paths: ids.map((id) => `/v2/orders/${id}`), headers })],
      ['GET /v3/chains', await load({ url, paths: ['/v3/chains'], headers })],
      ['GET /v3/quote/{id}', await load({ url, paths: ids.map((id) => `/v3/quote/${id}`) })],
      [
        'GET /v2/quote',
        await load({ url, headers, paths: ['/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000'] }),
      ],
      [
        'POST /v2/orders (new orders)',
        await load({
          url,
          headers,
          method: 'POST',
          paths: ['/v2/orders'],
          bodyTemplate: JSON.stringify({
            source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
            destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
            nonce: '__NONCE__',
          }),
        }),
      ],
    ];
    return targets.map(([name, r]) => ({
      store: kind,
      target: name,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'vs bare': `${Math.round((r.rps / bare.rps) * 100)}%`,
      // On a small machine the load generator shares the cores: the CPU each request costs the server
      // compares the routes whatever limits the run.
      'cpu µs/req': Number(r.cpuUsPerRequest.toFixed(1)),
      'vs bare (cpu)': `${Math.round((bare.cpuUsPerRequest / r.cpuUsPerRequest) * 100)}%`,
    }));
  } finally {
    await api.close();
    await uncached.close();
    await sameSize.close();
    await drop();
  }
}

const PARTS = ['http', 'streams', 'settlement', 'solver-pass', 'solver-quotes', 'solver-split', 'bitcoin', 'solana', 'tron', 'scale', 'serve-memory'] as const;
const only = process.env.BENCH_ONLY?.split(',').map((p) => p.trim()).filter(Boolean);
const unknown = only?.filter((p) => !(PARTS as readonly string[]).includes(p));
if (unknown?.length) throw new Error(`BENCH_ONLY: unknown part ${unknown.join(', ')}; the parts are ${PARTS.join(', ')}`);
const runs = (part: (typeof PARTS)[number]): boolean => !only || only.includes(part);

const kinds: StoreKind[] = ['pglite'];
if (process.env.DATABASE_URL) kinds.push('postgres');
else console.warn('DATABASE_URL is not set: PostgreSQL is not benchmarked');

if (runs('http')) {
  const bare = Fastify();
  const staticBody = { status: 'Ok', result: { hello: 'world', numbers: [1, 2, 3] } };
  bare.get('/bare', async () => staticBody);
  const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
  console.log(`${CONNECTIONS} connections, ${DURATION} s per target, ${ORDERS} orders in the database`);
  const rows = [];
  for (const kind of kinds) rows.push(...(await benchStore(kind, bareUrl)));
  console.table(rows);
  await bare.close();
}
if (runs('streams')) for (const kind of kinds) console.table(await benchEventStreams(kind));
if (runs('settlement')) console.table(await benchSettlement());
if (runs('solver-pass')) console.table(await benchSolverPass());
if (runs('solver-quotes')) console.table(await benchSolverQuotes());
if (runs('solver-split')) console.table(await benchSolverSplit());
if (runs('bitcoin')) {
  if (findLitecoind()) {
    for (const kind of kinds) console.table(await benchBitcoinWatcher(kind));
    console.table(await benchLitecoinSettlement());
  } else {
    console.warn('litecoind is not on the PATH: the Bitcoin-family watcher is not benchmarked');
  }
}
if (runs('solana')) {
  const noClang = await clangUnavailable();
  if (noClang === undefined) {
    for (const kind of kinds) console.table(await benchSolanaWatcher(kind));
    console.table(await benchSolanaSettlement());
  } else {
    console.warn(`the Solana programs cannot be built (${noClang}): the Solana watcher and settlement are not benchmarked`);
  }
}
if (runs('tron')) console.table(await benchTronSettlement());
if (runs('scale')) {
  // At scale, as users meet it: `hashlock dev` in its own process, clients on the event streams. The
  // 100-swap targets are the clients' own (no readers beside them); the 1,000-swap run has readers.
  console.table(await benchScale({ swaps: 100, kind: 'pglite', settleSeconds: 0, readers: 0 }));
  if (process.env.DATABASE_URL) {
    console.table(await benchScale({ swaps: 100, kind: 'postgres', settleSeconds: 0, readers: 0 }));
    // Three runs on one service, its memory five minutes after each: back down, and no growth.
    console.table(await benchScale({ swaps: 1000, kind: 'postgres', settleSeconds: 300, runs: 3 }));
  }
}
if (runs('serve-memory')) {
  // `hashlock serve` as an operator runs it: PostgreSQL, three chains; its resident memory against 200 MB.
  if (!process.env.DATABASE_URL) console.warn('DATABASE_URL is not set: the memory of hashlock serve on PostgreSQL is not benchmarked');
  else if (!findLitecoind()) console.warn('litecoind is not on the PATH: the memory of hashlock serve with three chains is not benchmarked');
  else console.table(await benchServeMemory());
}
