// Order event streams under load: 1,000 open streams on one instance (the service's own wiring:
// startService, its recorder and event hub, no chains), with the clients in another process. Each
// commit changes one order's status through another database connection (as a watcher in another
// instance would); the time runs from the commit's return to the event's arrival at each client
// (wall clock, one machine).
//   one order each: 1,000 streams of GET /v2/orders/{id}/events, 200 commits, each for one stream;
//   app-wide: 1,000 streams of GET /v2/events, 50 commits, each reaching all 1,000;
//   filtered: 1,000 streams of GET /v2/events?address=<its own address>, 50 commits, each of an order
//   of one of those addresses: every commit asks all 1,000 filters, and reaches one stream.
// Memory per stream: the service process's heap (and buffers) with the streams open, less before, per stream.
// Run alone: node --import tsx bench/event-streams.ts
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEV_CONFIG_PATH, loadServiceConfig, PACKAGE_ROOT } from '../src/config/service-config.ts';
import { startService } from '../src/service.ts';
import { createApp } from '../src/store/apps.ts';
import { openStore, type Db, type StoreKind } from '../src/store/database.ts';
import { insertOrder } from '../src/store/orders.ts';
import { sampleOrder } from '../test/helpers/fixtures.ts';
import { createDatabase } from '../test/helpers/stores.ts';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1_000);
const wall = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
function memory(): { heap: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external };
}

/** The client process: opens the streams; `report()` returns [client, order, status, arrival ms] of every event since. */
async function openClients(urls: string[], headers: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(PACKAGE_ROOT, 'bench/sse-clients.ts'), JSON.stringify({ urls, headers })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error('the client process ended');
    return line.value;
  };
  if ((await next()) !== 'ready') throw new Error('the clients did not start');
  return {
    report: async (): Promise<Array<[number, string, string, number]>> => {
      child.stdin.write('report\n');
      return JSON.parse(await next()) as Array<[number, string, string, number]>;
    },
    stop: async () => {
      child.stdin.write('exit\n');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Moves an order to `initiate_detected` with one autocommitted statement; returns when it committed. */
async function commitChange(db: Db, orderId: string): Promise<number> {
  await db.updateTable('swaps').set({ initiate_tx_hash: `0x${orderId.slice(0, 16)}` }).where('order_id', '=', orderId).where('side', '=', 'source').execute();
  return wall();
}

export async function benchEventStreams(kind: StoreKind): Promise<Array<Record<string, string | number>>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-events-'));
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench_events') : undefined;
  const config = {
    ...loadServiceConfig(DEV_CONFIG_PATH, { HASHLOCK_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...(database ? { DATABASE_URL: database.url } : {}) }),
    chains: {},
    rateLimits: undefined,
  };
  process.env.HASHLOCK_SECRET_KEY ??= randomBytes(32).toString('hex');
  const service = await startService(config);
  // Another instance's connection on PostgreSQL; PGlite has one.
  const writer = database ? await openStore({ databaseUrl: database.url }) : service.store;
  const rows: Array<Record<string, string | number>> = [];
  try {
    const { app, key } = await createApp(service.store.db, { name: 'bench' });
    const headers = { 'service-app-id': key };
    const orders: string[] = [];
    for (let i = 0; i < STREAMS + 50; i++) {
      const order = sampleOrder(app.id);
      await insertOrder(service.store.db, order);
      orders.push(order.id);
    }
    // One address per filtered stream; the first 50 have an order each.
    const addresses = Array.from({ length: STREAMS }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
    const addressOrders: string[] = [];
    for (const address of addresses.slice(0, 50)) {
      const order = sampleOrder(app.id);
      await insertOrder(service.store.db, { ...order, source: { ...order.source, initiator: address } });
      addressOrders.push(order.id);
    }
    await sleep(1_500); // the recorder records their creation

    // `reaches`: how many streams each change goes to.
    const scenarios = [
      { name: `${STREAMS} streams, one order each`, urls: orders.slice(0, STREAMS).map((id) => `${service.url}/v2/orders/${id}/events`), changes: orders.slice(0, 200), reaches: 1 },
      { name: `${STREAMS} streams of the app's orders`, urls: Array.from({ length: STREAMS }, () => `${service.url}/v2/events`), changes: orders.slice(STREAMS, STREAMS + 50), reaches: STREAMS },
      { name: `${STREAMS} streams of the app's orders, each of one address`, urls: addresses.map((a) => `${service.url}/v2/events?address=${a}`), changes: addressOrders, reaches: 1 },
    ];
    for (const scenario of scenarios) {
      const before = memory();
      const clients = await openClients(scenario.urls, headers);
      await sleep(2_000);
      await clients.report(); // the order streams' history
      const open = memory();
      const committed = new Map<string, number>();
      for (const id of scenario.changes) {
        committed.set(id, await commitChange(writer.db, id));
        await sleep(scenario.changes.length > 100 ? 20 : 100);
      }
      await sleep(2_000);
      const receipts = (await clients.report()).filter(([, , status]) => status === 'initiate_detected');
      const latencies = receipts.map(([, orderId, , at]) => at - committed.get(orderId)!).sort((a, b) => a - b);
      const first = new Map<string, number>();
      for (const [, orderId, , at] of receipts) first.set(orderId, Math.min(first.get(orderId) ?? Infinity, at - committed.get(orderId)!));
      const firsts = [...first.values()].sort((a, b) => a - b);
      const expected = scenario.changes.length * scenario.reaches;
      await clients.stop();
      rows.push({
        store: kind,
        scenario: scenario.name,
        'events delivered': `${receipts.length} of ${expected}`,
        'commit -> client median (ms)': percentile(latencies, 50).toFixed(1),
        'p95 (ms)': percentile(latencies, 95).toFixed(1),
        'max (ms)': (latencies.at(-1) ?? NaN).toFixed(1),
        'first client median / p95 (ms)': `${percentile(firsts, 50).toFixed(1)} / ${percentile(firsts, 95).toFixed(1)}`,
        // RSS moves with the allocator's pages and the collector, not with streams: the heap is the measure.
        'memory per stream (KB, heap + buffers)': ((open.heap - before.heap) / STREAMS / 1024).toFixed(1),
      });
    }
  } finally {
    if (writer !== service.store) await writer.close();
    await service.stop();
    await database?.drop();
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kinds: StoreKind[] = process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
  for (const kind of kinds) console.table(await benchEventStreams(kind));
}
