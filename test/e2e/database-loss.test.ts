// The service losing its database connections mid-settlement, as an operator meets a PostgreSQL
// restart or failover: every connection of its database terminated every 0.5 s, 24 times, while 20
// clients start their swaps two a second, and a real restart of a server of the test's own. The
// process stays up, answers every request (a request whose connection is lost is retried on a new
// one), settles every swap once, records each order event once and in order, streams every event
// once to a client that resumes, and delivers each webhook once.
import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import pg from 'pg';
import { statusRank, type OrderStatus } from '../../src/orders/status.ts';
import { EVENT_ID_HEADER } from '../../src/webhooks/signature.ts';
import { SseClient, type SseEvent } from '../helpers/sse.ts';
import { createDatabase } from '../helpers/stores.ts';
import { startPostgresServer, postgresBinDir, type PostgresServer } from '../helpers/postgres-server.ts';
import { startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { openServiceWorld, type ServiceProcess, type ServiceWorld } from './service-process.ts';

const SWAPS = 20;
const ROUNDS = 24;
const ROUND_MS = 500;
/** Clients start a swap every this many ms, each with one call per step and no retry of its own. */
const START_EVERY_MS = 500;
const databaseUrl = process.env.DATABASE_URL;
const skip = databaseUrl ? false : process.env.CI ? false : 'DATABASE_URL is not set: the database-loss tests run on PostgreSQL';
if (skip) console.warn(`\n*** SKIPPING the database-loss tests: ${skip} ***\n`);

let world: ServiceWorld | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

before(async () => {
  if (skip) return;
  world = await openServiceWorld();
});

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await world?.close();
});

/** What a client sees of the app's orders: the event stream (resumed with Last-Event-ID as EventSource does) and a webhook receiver. */
interface Observers {
  streamed: SseEvent[];
  reconnects: number;
  receiver: Receiver;
  stop(): void;
}

async function observe(service: ServiceProcess): Promise<Observers> {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  await service.call('/v2/webhooks', { method: 'POST', body: { url: receiver.url } });
  const observers: Observers = { streamed: [], reconnects: -1, receiver, stop: () => undefined };
  let stopped = false;
  let current: SseClient | undefined;
  const follow = async () => {
    while (!stopped) {
      observers.reconnects++;
      const lastId = observers.streamed.at(-1)?.id;
      try {
        current = await SseClient.open(`${service.api}/v2/events`, { 'service-app-id': service.key, ...(lastId ? { 'last-event-id': lastId } : {}) }, (e) => observers.streamed.push(e));
        await current.until(() => current!.closed || stopped, 600_000, 'the stream to end');
      } catch {
        // Refused while the service could not open it: asked again, as EventSource does.
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const following = follow();
  observers.stop = () => {
    stopped = true;
    current?.close();
    void following;
  };
  cleanups.push(() => Promise.resolve(observers.stop()));
  // The stream is open before the first order exists.
  for (const end = Date.now() + 10_000; !current; await new Promise((r) => setTimeout(r, 20))) assert.ok(Date.now() < end, 'the event stream opened');
  return observers;
}

/** Each order's events recorded once and in order, every one streamed once and delivered once. */
async function assertToldOnce(t: TestContext, url: string, ids: string[], observers: Observers): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; order_id: string; status: OrderStatus }>('select id::text as id, order_id, status from order_events order by order_events.id');
    for (const orderId of ids) {
      const statuses = rows.filter((r) => r.order_id === orderId).map((r) => r.status);
      assert.equal(statuses.at(-1), 'completed', `order ${orderId} ends completed: ${statuses.join(', ')}`);
      for (let i = 1; i < statuses.length; i++) {
        assert.ok(statusRank(statuses[i]!) > statusRank(statuses[i - 1]!), `order ${orderId}: each status once, moving forward: ${statuses.join(', ')}`);
      }
    }
    const eventIds = rows.map((r) => r.id);

    for (const end = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
      const streamedAll = observers.streamed.length >= eventIds.length;
      const deliveredAll = new Set(observers.receiver.received.map((r) => r.headers[EVENT_ID_HEADER.toLowerCase()])).size >= eventIds.length;
      if (streamedAll && deliveredAll) break;
      assert.ok(Date.now() < end, `streamed ${observers.streamed.length} and delivered ${observers.receiver.received.length} of ${eventIds.length} events`);
    }
    assert.deepEqual(
      observers.streamed.map((e) => e.id),
      eventIds,
      'the stream sent every event once, in order, across its reconnections',
    );
    const delivered = observers.receiver.received.map((r) => String(r.headers[EVENT_ID_HEADER.toLowerCase()]));
    assert.deepEqual([...delivered].sort(), [...eventIds].sort(), 'each event delivered to the webhook once');
    const { rows: deliveries } = await client.query<{ status: string; attempts: number }>('select status, attempts from webhook_deliveries');
    assert.ok(
      deliveries.every((d) => d.status === 'delivered' && d.attempts === 1),
      `every delivery delivered at its first attempt: ${JSON.stringify(deliveries.filter((d) => d.status !== 'delivered' || d.attempts !== 1))}`,
    );
    t.diagnostic(`${eventIds.length} events; the stream reconnected ${observers.reconnects} times`);
  } finally {
    await client.end();
  }
}

/** Resolves with how long after now GET /health answers 200 again. */
async function healthyAfter(service: ServiceProcess, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await service.healthy())) {
    assert.ok(Date.now() - started < timeoutMs, `/health answered 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

test('every connection of the database terminated every 0.5 s, 24 times, while 20 swaps start two a second', { skip, timeout: 400_000 }, async (t) => {
  const database = await createDatabase(databaseUrl!, 'hashlock_dbloss');
  cleanups.push(() => database.drop());
  const mark = await world!.mark();
  const service = await world!.startService(database.url);
  cleanups.push(() => service.killed());
  const observers = await observe(service);
  // The solver's liquidity is read before the rounds begin; a quote before it would be refused.
  const { destinationAmount } = await world!.createSwaps(service, 0);

  // A client reading the order list (uncached: a query each time) meanwhile: every read answered.
  const answers = new Map<number, number>();
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const res = await fetch(`${service.api}/v2/orders?per_page=5`, { headers: { 'service-app-id': service.key } });
      const body = (await res.json()) as { error?: string };
      answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
      assert.equal(res.status, 200, `the order list during the rounds: ${res.status} ${body.error}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const name = new URL(database.url).pathname.slice(1);
  const terminated: number[] = [];
  // Each client: create its order, sign and initiate it, one call each; a failure is the swap lost.
  const starts = Array.from({ length: SWAPS }, async (_, i) => {
    await new Promise((r) => setTimeout(r, i * START_EVERY_MS));
    const { created } = await world!.createSwaps(service, 1);
    await world!.initiate(service, created);
    return created[0]!.order_id;
  });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await new Promise((r) => setTimeout(r, ROUND_MS));
      const { rows } = await admin.query<{ n: number }>(
        'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t',
        [name],
      );
      terminated.push(rows[0]!.n);
      assert.equal(service.child.exitCode, null, `the service is up after round ${round + 1}:\n${service.output()}`);
    }
  } finally {
    await admin.end();
    reading = false;
    await reader;
  }
  const started = await Promise.allSettled(starts);
  const lost = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
  assert.deepEqual(lost, [], 'every client started its swap with one call per step');
  const ids = started.map((s) => (s as PromiseFulfilledResult<string>).value);
  t.diagnostic(`connections terminated each round: ${terminated.join(', ')}; order list answers meanwhile: ${JSON.stringify(Object.fromEntries(answers))}`);
  assert.ok(terminated.every((n) => n > 0), 'every round terminated connections of the service');
  const back = await healthyAfter(service, 2_000);
  t.diagnostic(`/health 200 again ${back} ms after the last round`);

  await world!.waitCompleted(service, ids, 180_000);
  assert.equal(service.child.exitCode, null, 'the service never exited');
  await world!.assertSettledOnce(mark, SWAPS, destinationAmount);
  await world!.assertNothingSecretPrinted(service, mark);
  await assertToldOnce(t, database.url, ids, observers);
  observers.stop();
});

const serverSkip = skip || (postgresBinDir() ? false : process.env.CI ? false : 'no PostgreSQL server binaries to start a server of the test');
if (serverSkip && !skip) console.warn(`\n*** SKIPPING the PostgreSQL restart test: ${serverSkip} ***\n`);

test('the PostgreSQL server restarted mid-swap', { skip: serverSkip, timeout: 400_000 }, async (t) => {
  const server: PostgresServer = await startPostgresServer();
  cleanups.push(() => server.destroy());
  const database = await createDatabase(server.url, 'hashlock_restart');
  const mark = await world!.mark();
  const service = await world!.startService(database.url);
  cleanups.push(() => service.killed());
  const observers = await observe(service);
  const { ids, destinationAmount } = await world!.startSwaps(service, SWAPS);

  await new Promise((r) => setTimeout(r, 1_500));
  await server.stop();
  // While the server is down the service says so, and stays up.
  await new Promise((r) => setTimeout(r, 3_000));
  const health = await fetch(`${service.api}/health`);
  assert.equal(health.status, 503, '/health reports the database unavailable while the server is down');
  assert.equal(((await health.json()) as { result: { database: string } }).result.database, 'unreachable');
  assert.equal(service.child.exitCode, null, `the service is up while its database is down:\n${service.output()}`);
  await server.start();
  const back = await healthyAfter(service, 5_000);
  t.diagnostic(`/health 200 again ${back} ms after the server was back`);

  await world!.waitCompleted(service, ids, 180_000);
  assert.equal(service.child.exitCode, null, 'the service never exited');
  await world!.assertSettledOnce(mark, SWAPS, destinationAmount);
  await world!.assertNothingSecretPrinted(service, mark);
  await assertToldOnce(t, database.url, ids, observers);
  observers.stop();
});
