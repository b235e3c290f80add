// An idle engine is cheap: with no job unsettled its two loops sleep (a claim every few seconds, not two
// a second), and nothing due waits for that sleep to end: a job queued is sent at once (`job_queued`
// wakes both loops), a job written signed (only the follow-up takes it) too, and a retry that a moved
// clock brings due is sent within the interval. The engine runs as the service runs it (`engineWorkers`
// under `runWorker`, woken by the notification), with a driver that only records what it is asked.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { engineWorkers, TxEngine } from '../../src/engine/engine.ts';
import type { JobItem, SendResult, SignResult, TxDriver, TxState } from '../../src/engine/driver.ts';
import { LeaseHeartbeat, runWorker, type LeasedLoop } from '../../src/lease-loop.ts';
import type { Store } from '../../src/store/database.ts';
import { enqueueJob, findJob } from '../../src/store/relayer-jobs.ts';
import { MovableClock } from '../helpers/clock.ts';
import { randomHex32, seedBasics, localnetRegistry } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore, StatementCounter } from '../helpers/stores.ts';
import { waitFor } from '../helpers/wait.ts';

const CHAIN = 'ethereum_localnet';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Signs every job as `raw-<id>`; refuses the broadcasts of the hashes in `refuse` once; a transaction sent lands. */
class RecordingDriver implements TxDriver<unknown> {
  readonly chain = CHAIN;
  readonly signer = 'solver' as const;
  readonly sequenced = false;
  readonly resendRefusalIsFinal = true;
  readonly sent: Array<{ hash: string; at: number }> = [];
  readonly refuse = new Set<string>();
  parse = (payload: unknown) => payload;
  unreachable = () => false;
  describe = (err: unknown) => String(err);
  resignable = () => true;
  async *sign(items: ReadonlyArray<JobItem<unknown>>): AsyncIterable<Array<JobItem<unknown> & SignResult>> {
    yield items.map((item) => ({ ...item, signed: { raw: `raw-${item.job.id}`, hash: `hash-${item.job.id}` } }));
  }
  async broadcast(tx: { raw: string; hash: string }): Promise<SendResult> {
    this.sent.push({ hash: tx.hash, at: Date.now() });
    if (this.refuse.delete(tx.hash)) return { outcome: 'refused', reason: 'not now' };
    return { outcome: 'sent' };
  }
  async states(items: ReadonlyArray<{ signed: { hash: string } }>): Promise<TxState[]> {
    return items.map(({ signed }) => (this.sent.some((s) => s.hash === signed.hash) ? { state: 'landed', hash: signed.hash } : { state: 'pending' }));
  }
}

describeEachStore('an idle engine', (kind) => {
  let store: Store;
  let counter: StatementCounter;
  let driver: RecordingDriver;
  let clock: MovableClock;
  let loops: LeasedLoop[];
  let unlisten: () => Promise<void>;
  let heartbeat: LeaseHeartbeat;

  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db, localnetRegistry());
    counter = new StatementCounter();
    driver = new RecordingDriver();
    clock = new MovableClock();
    // The service's defaults: a look every second while a job is unsettled, every 5 s with none.
    const engine = new TxEngine(driver, { db: store.db.withPlugin(counter), recheckMs: 200, retryMs: 60_000, clock });
    const workers = engineWorkers(engine);
    heartbeat = new LeaseHeartbeat(store.db, 'idle-test');
    loops = workers.map((worker) => runWorker(store.db, worker, { holder: 'idle-test', heartbeat, onError: (err) => assert.fail(String(err)) }));
    // As the service wires it: the notification wakes every worker that names it.
    unlisten = await store.listen('job_queued', {
      message: (name) => workers.forEach((worker, i) => worker.wakeOnJob === name && loops[i]!.wake()),
      connected: () => undefined,
    });
    await pause(500); // both loops made their first pass and found nothing
  });
  after(async () => {
    await Promise.all(loops.map((loop) => loop.stop()));
    await unlisten();
    await store.close();
  });

  test('with no job unsettled, its two loops claim at most once each in 3 s (they used to, twice a second)', async () => {
    counter.count = 0;
    await pause(3_000);
    assert.ok(counter.count <= 2, `${counter.count} statements in 3 s`);
  });

  test('a job queued while the loops sleep is sent at once, and confirmed at its recheck', async () => {
    await pause(1_000); // well into the idle sleep
    const key = `idle:${randomHex32()}`;
    const queuedAt = Date.now();
    const { job } = await enqueueJob(store.db, { chain: CHAIN, signer: 'solver', action: 'fund', idempotencyKey: key, payload: {} });
    await waitFor(() => driver.sent.some((s) => s.hash === `hash-${job.id}`), 2_000, 'the job sent');
    const sentAfter = driver.sent.find((s) => s.hash === `hash-${job.id}`)!.at - queuedAt;
    assert.ok(sentAfter < 500, `sent ${sentAfter} ms after it was queued`);
    await waitFor(async () => (await findJob(store.db, key))?.status === 'confirmed', 3_000, 'the job confirmed');
    const confirmedAfter = Date.now() - queuedAt;
    assert.ok(confirmedAfter < 1_500, `confirmed ${confirmedAfter} ms after it was queued (recheck after 200 ms)`);
  });

  test('a job written signed, which only the follow-up loop takes, is sent at once when queued', async () => {
    await pause(5_500); // both loops back to their idle sleep
    const key = `idle-signed:${randomHex32()}`;
    const queuedAt = Date.now();
    await sql`
      insert into relayer_jobs (chain, signer, action, idempotency_key, payload, raw_tx, tx_hash, tx_hashes, signed_at)
      values (${CHAIN}, 'solver', 'redeem', ${key}, '{"kind":"signed"}'::jsonb, 'raw-signed', 'hash-signed', array['hash-signed'], now())
    `.execute(store.db);
    await waitFor(() => driver.sent.some((s) => s.hash === 'hash-signed'), 2_000, 'the signed job sent');
    const sentAfter = driver.sent.find((s) => s.hash === 'hash-signed')!.at - queuedAt;
    assert.ok(sentAfter < 500, `sent ${sentAfter} ms after it was written`);
    await waitFor(async () => (await findJob(store.db, key))?.status === 'confirmed', 3_000, 'the signed job confirmed');
  });

  test('a retry a moved clock brings due is sent within the interval, though no notification announces it', async () => {
    const key = `idle-retry:${randomHex32()}`;
    const { job } = await enqueueJob(store.db, { chain: CHAIN, signer: 'solver', action: 'fund', idempotencyKey: key, payload: {}, maxAttempts: 5 });
    driver.refuse.add(`hash-${job.id}`);
    await waitFor(async () => (await findJob(store.db, key))?.lastError.includes('not now') === true, 2_000, 'the first broadcast refused');
    await pause(1_500);
    assert.equal(driver.sent.filter((s) => s.hash === `hash-${job.id}`).length, 1, 'not sent again before its minute');
    const movedAt = Date.now();
    clock.advance(60_000);
    await waitFor(() => driver.sent.filter((s) => s.hash === `hash-${job.id}`).length === 2, 3_000, 'the retry sent');
    const retriedAfter = driver.sent.at(-1)!.at - movedAt;
    assert.ok(retriedAfter <= 1_300, `retried ${retriedAfter} ms after the clock passed its backoff`);
    await waitFor(async () => (await findJob(store.db, key))?.status === 'confirmed', 3_000, 'the retried job confirmed');
  });
});

describeEachStore('engine loops without a lease', (kind) => {
  let store: Store;
  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db, localnetRegistry());
  });
  after(() => store.close());

  test('the follow-up loop is woken when what the new loop sent falls due, not at once (it found nothing due: an empty claim per pass)', async () => {
    const engine = new TxEngine(new RecordingDriver(), { db: store.db, recheckMs: 400 });
    const [sender, followUp] = engineWorkers(engine);
    const wakes: number[] = [];
    const unsubscribe = followUp!.subscribe!(() => wakes.push(Date.now()));
    const pass = async () => {
      await enqueueJob(store.db, { chain: CHAIN, signer: 'solver', action: 'fund', idempotencyKey: `recheck:${randomHex32()}`, payload: {} });
      await sender!.tick(new AbortController().signal, () => undefined);
      return Date.now();
    };
    try {
      const firstSent = await pass();
      assert.deepEqual(wakes, [], 'not woken at once');
      await pause(100);
      await pass();
      await waitFor(() => wakes.length > 0, 2_000, 'the follow-up woken');
      assert.ok(wakes[0]! - firstSent >= 390, `woken ${wakes[0]! - firstSent} ms after the first pass sent (recheck 400 ms)`);
      await pause(600);
      assert.equal(wakes.length, 1, 'two passes within one recheck: one wake');
      // A job it sent is now due: the follow-up pass confirms it.
      await followUp!.tick(new AbortController().signal, () => undefined);
      assert.equal(await store.db.selectFrom('relayer_jobs').select('id').where('idempotency_key', 'like', 'recheck:%').where('status', '=', 'confirmed').execute().then((r) => r.length), 2);
    } finally {
      unsubscribe();
    }
  });

  test('an instance waiting for the lease asks every second, though it has nothing to claim: it takes over in time', async () => {
    const driver = new RecordingDriver();
    const engine = new TxEngine(driver, { db: store.db });
    await sql`insert into worker_leases (name, holder, expires_at) values (${engine.lease}, 'other', now() + interval '1500 milliseconds')`.execute(store.db);
    const loops = engineWorkers(engine).map((worker) => runWorker(store.db, worker, { holder: 'waiting', onError: (err) => assert.fail(String(err)) }));
    try {
      const { job } = await enqueueJob(store.db, { chain: CHAIN, signer: 'solver', action: 'fund', idempotencyKey: `lease:${randomHex32()}`, payload: {} });
      await waitFor(() => driver.sent.some((s) => s.hash === `hash-${job.id}`), 3_000, 'sent once the other holder let its lease run out');
    } finally {
      await Promise.all(loops.map((loop) => loop.stop()));
    }
  });
});
