import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../../src/store/database.ts';
import { sql } from 'kysely';
import {
  claimJobs,
  claimJobsAndNext,
  enqueueJob,
  findJob,
  markAttemptFailed,
  RESIMULATE_WITHOUT_BLOCK_MS,
  markSubmitted,
  markSubmittedMany,
} from '../../src/store/relayer-jobs.ts';
import { confirmJob, saveSignedTxs } from '../../src/store/signed-txs.ts';
import { EnqueueBatch, JobLookup } from '../../src/solver/job-batches.ts';
import { describeEachStore, openTestStore, StatementCounter } from '../helpers/stores.ts';
import { seedBasics } from '../helpers/fixtures.ts';

describeEachStore('relayer job queue', (kind) => {
  let store: Store;
  let n = 0;
  const chain = 'ethereum_localnet';
  const key = () => `test:${kind}:${++n}:${Date.now()}`;

  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db);
  });
  after(() => store.close());

  test('twenty concurrent enqueues of one key make one job', async () => {
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: k, payload: { i } })),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.job.id)).size, 1);
    const count = await store.db.selectFrom('relayer_jobs').select('id').where('idempotency_key', '=', k).execute();
    assert.equal(count.length, 1);
    await store.db.deleteFrom('relayer_jobs').execute();
  });

  test('jobs enqueued in one turn are written together; a key twice, or one already queued, makes no second job', async () => {
    const batch = new EnqueueBatch(store.db);
    const [k1, k2, k3] = [key(), key(), key()];
    await enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: k3, payload: {} });
    const created = await Promise.all(
      [k1, k2, k1, k3].map((k) => batch.add({ chain, action: 'solver-redeem', idempotencyKey: k, payload: { k }, signer: 'solver' })),
    );
    assert.deepEqual(created, [true, true, false, false]);
    const rows = await store.db.selectFrom('relayer_jobs').select(['idempotency_key', 'signer']).execute();
    assert.equal(rows.length, 3);
    assert.equal(rows.find((r) => r.idempotency_key === k1)?.signer, 'solver');
    await store.db.deleteFrom('relayer_jobs').execute();
  });

  test('jobs looked up in one turn are read in one statement, each caller answered with its own', async () => {
    const counter = new StatementCounter();
    const lookup = new JobLookup(store.db.withPlugin(counter));
    const [k1, k2, missing] = [key(), key(), key()];
    await enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: k1, payload: { n: 1 } });
    await enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: k2, payload: { n: 2 } });
    const found = await Promise.all([k2, missing, k1, k2].map((k) => lookup.add(k)));
    assert.deepEqual(
      found.map((job) => job?.idempotencyKey),
      [k2, undefined, k1, k2],
    );
    assert.deepEqual(found[0]?.payload, { n: 2 });
    assert.equal(counter.count, 1);
    await store.db.deleteFrom('relayer_jobs').execute();
  });

  test('a claim tells, in its statement, whether any job is unsettled and when the next of its kind falls due', async () => {
    const other = 'arbitrum_localnet';
    const claim = (withTx?: boolean) => claimJobsAndNext(store.db, { chain: other, worker: 'w', leaseMs: 60_000, limit: 10, ...(withTx === undefined ? {} : { withTx }) });
    assert.deepEqual(await claim(), { jobs: [], pending: false, nextDueInMs: null });
    const k = key();
    await enqueueJob(store.db, { chain: other, action: 'redeem', idempotencyKey: k, payload: {} });
    const first = await claim(false);
    assert.equal(first.jobs.length, 1);
    assert.equal(first.pending, true, 'the claim read the queue before it took the job');
    const running = await claim(false);
    assert.deepEqual([running.jobs.length, running.pending, running.nextDueInMs], [0, true, null], 'running: unsettled, but nothing waits to fall due');
    await markSubmitted(store.db, first.jobs[0]!.id, { worker: 'w', txHash: '0xaa', recheckMs: 30_000 });
    const submitted = await claim();
    assert.equal(submitted.jobs.length, 0);
    assert.ok(submitted.nextDueInMs! > 25_000 && submitted.nextDueInMs! <= 30_000, `the recheck due in ${submitted.nextDueInMs} ms`);
    const withTx = await claim(true);
    assert.deepEqual([withTx.pending, withTx.nextDueInMs], [true, null], 'the job (stored with no transaction) is not of the kind asked for, but it is unsettled');
    await store.db.deleteFrom('relayer_jobs').execute();
    assert.deepEqual(await claim(), { jobs: [], pending: false, nextDueInMs: null });
  });

  test('a sender claims new jobs and jobs in flight apart; signed and submitted in one statement each, only while it holds them', async () => {
    for (let i = 0; i < 4; i++) await enqueueJob(store.db, { chain, action: 'initiate', idempotencyKey: key(), payload: { i } });
    const first = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 2, withTx: false });
    assert.deepEqual(first.map((j) => j.hasTx), [false, false]);
    const signed = first.map((j, i) => ({ jobId: j.id, raw: `0x0${i}`, hash: `0xaa${i}`, nonce: BigInt(i) }));
    // A job another worker holds is not written.
    const [other] = await claimJobs(store.db, { chain, worker: 'x', leaseMs: 60_000, limit: 1 });
    const saved = await saveSignedTxs(store.db, 'w', [...signed, { jobId: other!.id, raw: '0x09', hash: '0xbb', nonce: 9n }]);
    assert.deepEqual([...saved].sort(), first.map((j) => j.id).sort());
    await markSubmittedMany(store.db, 'w', signed.map((s) => ({ id: s.jobId, txHash: s.hash, nonce: s.nonce })), 0);
    assert.equal((await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 10, withTx: true })).length, 2);
    const fresh = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 10, withTx: false });
    assert.equal(fresh.length, 1, 'the last new job; the other is held by x');
    await store.db.deleteFrom('relayer_jobs').execute();
  });

  test('concurrent workers claim disjoint jobs, oldest first', async () => {
    for (let i = 0; i < 10; i++) await enqueueJob(store.db, { chain, action: 'initiate', idempotencyKey: key(), payload: { i } });
    const [a, b] = await Promise.all([
      claimJobs(store.db, { chain, worker: 'a', leaseMs: 60_000, limit: 6 }),
      claimJobs(store.db, { chain, worker: 'b', leaseMs: 60_000, limit: 6 }),
    ]);
    const ids = [...a, ...b].map((j) => j.id);
    assert.equal(ids.length, 10);
    assert.equal(new Set(ids).size, 10, 'no job went to both workers');
    assert.deepEqual((await claimJobs(store.db, { chain, worker: 'c', leaseMs: 60_000, limit: 10 })).length, 0);
    const payloads = a.map((j) => (j.payload as { i: number }).i);
    assert.deepEqual(payloads, [...payloads].sort((x, y) => x - y));
    await store.db.deleteFrom('relayer_jobs').execute();
  });

  test('a job goes queued -> running -> submitted -> running -> confirmed', async () => {
    const k = key();
    await enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: k, payload: { secret: 'x' } });
    const [job] = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1 });
    assert.equal(job?.status, 'running');
    await markSubmitted(store.db, job.id, { worker: 'w', txHash: '0xfeed', nonce: 7n, recheckMs: 0 });
    assert.equal((await findJob(store.db, k))?.status, 'submitted');
    const [again] = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1 });
    assert.equal(again?.txHash, '0xfeed');
    assert.equal(again?.nonce, '7');
    await confirmJob(store.db, job.id, 'w', '0xfeed');
    assert.equal((await findJob(store.db, k))?.status, 'confirmed');
    assert.equal((await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1 })).length, 0);
  });

  test('a worker that dies loses its jobs when the lease runs out; a stale worker cannot finish them', async () => {
    const k = key();
    await enqueueJob(store.db, { chain, action: 'refund', idempotencyKey: k, payload: {} });
    const [job] = await claimJobs(store.db, { chain, worker: 'dead', leaseMs: 1, limit: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const [taken] = await claimJobs(store.db, { chain, worker: 'alive', leaseMs: 60_000, limit: 1 });
    assert.equal(taken?.id, job?.id);
    assert.equal(taken?.attempts, 2);
    await confirmJob(store.db, job!.id, 'dead', '0xdead');
    assert.equal((await findJob(store.db, k))?.status, 'running', 'the dead worker no longer owns it');
    await confirmJob(store.db, job!.id, 'alive', '0xa11e');
    assert.equal((await findJob(store.db, k))?.status, 'confirmed');
  });

  test('failed attempts are retried until max_attempts, then the job fails', async () => {
    const k = key();
    await enqueueJob(store.db, { chain, action: 'initiate', idempotencyKey: k, payload: {}, maxAttempts: 2 });
    const [first] = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1 });
    assert.equal(await markAttemptFailed(store.db, first!.id, { worker: 'w', error: 'nonce too low', retryMs: 0 }), 'queued');
    const [second] = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1 });
    assert.equal(await markAttemptFailed(store.db, second!.id, { worker: 'w', error: 'reverted', retryMs: 0 }), 'failed');
    const job = await findJob(store.db, k);
    assert.equal(job?.status, 'failed');
    assert.equal(job?.lastError, 'reverted');
    assert.equal((await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1 })).length, 0);
  });

  test('a reverted simulation is simulated again once the chain has a newer block, or a while later without one, not on every pass', async () => {
    const gated = 'arbitrum_localnet';
    const setHeight = (height: bigint) =>
      sql`insert into chain_heights (chain, height) values (${gated}, ${height}) on conflict (chain) do update set height = excluded.height`.execute(store.db);
    await setHeight(100n);
    const k = key();
    await enqueueJob(store.db, { chain: gated, action: 'initiate', idempotencyKey: k, payload: {} });
    const [first] = await claimJobs(store.db, { chain: gated, worker: 'w', leaseMs: 60_000, limit: 1 });
    assert.equal(await markAttemptFailed(store.db, first!.id, { worker: 'w', error: 'reverted: ERC20InsufficientAllowance', retryMs: 0, untilNewBlock: true }), 'queued');
    assert.equal((await claimJobs(store.db, { chain: gated, worker: 'w', leaseMs: 60_000, limit: 1 })).length, 0, 'same block: not simulated again');
    const later = Date.now() + RESIMULATE_WITHOUT_BLOCK_MS + 1_000;
    assert.equal((await claimJobs(store.db, { chain: gated, worker: 'w', leaseMs: 60_000, limit: 1, now: later })).length, 1, 'no block for a while: simulated again anyway');
    assert.equal(await markAttemptFailed(store.db, first!.id, { worker: 'w', error: 'reverted: ERC20InsufficientAllowance', retryMs: 0, untilNewBlock: true }), 'queued');
    assert.equal((await claimJobs(store.db, { chain: gated, worker: 'w', leaseMs: 60_000, limit: 1 })).length, 0);
    await setHeight(101n);
    const [again] = await claimJobs(store.db, { chain: gated, worker: 'w', leaseMs: 60_000, limit: 1 });
    assert.equal(again?.id, first!.id, 'a new block: simulated again');
    // A refusal that is not a simulation's (a broadcast refused) is retried after its backoff, block or not.
    assert.equal(await markAttemptFailed(store.db, again.id, { worker: 'w', error: 'broadcast refused', retryMs: 0 }), 'queued');
    assert.equal((await claimJobs(store.db, { chain: gated, worker: 'w', leaseMs: 60_000, limit: 1 })).length, 1);
  });
});
