// The order actions' wait for a job to go out: however many requests wait, one read per poll.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../../src/store/database.ts';
import { claimJobs, enqueueJob, markSubmitted } from '../../src/store/relayer-jobs.ts';
import { SubmissionWait } from '../../src/relayer/submission-wait.ts';
import { seedBasics } from '../helpers/fixtures.ts';
import { openTestStore, StatementCounter } from '../helpers/stores.ts';

let store: Store;
before(async () => {
  store = await openTestStore('pglite');
  await seedBasics(store.db);
});
after(() => store.close());

const chain = 'ethereum_localnet';

test('two hundred waiters on a hundred jobs: one read per poll, each answered once its job is out, the rest after their time', async () => {
  const jobs = await Promise.all(Array.from({ length: 100 }, (_, i) => enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: `wait:${i}`, payload: { i } })));
  const counter = new StatementCounter();
  const wait = new SubmissionWait(store.db.withPlugin(counter), 50);
  // Each waiter's time: long enough that one answered at a send is told apart from one answered at
  // its end even when this machine is busy (the sends below take their own time).
  const timeMs = 3_000;
  const started = Date.now();
  const answered = new Map<string, number>();
  const waiters = jobs.flatMap(({ job }) =>
    [0, 1].map(() =>
      wait.wait(job, timeMs).then((latest) => {
        answered.set(`${latest.idempotencyKey}:${answered.size}`, Date.now() - started);
        return latest;
      }),
    ),
  );
  // The relayer sends half of them (those it claims first), at once.
  await new Promise((r) => setTimeout(r, 200));
  const claimed = await claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 50 });
  assert.equal(claimed.length, 50, 'fifty jobs claimed');
  for (const job of claimed) await markSubmitted(store.db, job.id, { worker: 'w', txHash: `0x${job.id.padStart(64, '0')}`, recheckMs: 60_000 });
  const sentAt = Date.now() - started;
  const sent = new Set(claimed.map((j) => j.idempotencyKey));
  const results = await Promise.all(waiters);
  const elapsed = Date.now() - started;
  for (const job of results) {
    if (sent.has(job.idempotencyKey)) assert.equal(job.status, 'submitted', `${job.idempotencyKey} answered once out`);
    else assert.equal(job.status, 'queued', `${job.idempotencyKey} answered with its latest state after its time`);
  }
  const sentTimes = [...answered.entries()].filter(([k]) => sent.has(k.split(':').slice(0, 2).join(':'))).map(([, t]) => t);
  const unsentTimes = [...answered.entries()].filter(([k]) => !sent.has(k.split(':').slice(0, 2).join(':'))).map(([, t]) => t);
  assert.ok(
    Math.max(...sentTimes) < Math.min(sentAt + 1_000, timeMs),
    `the sent jobs' waiters answered within a few polls of the send (done at ${sentAt} ms), not at the end of their time (${Math.max(...sentTimes)} ms)`,
  );
  assert.ok(Math.min(...unsentTimes) >= timeMs - 5, `the others answered at the end of their time (${Math.min(...unsentTimes)} ms)`);
  const polls = Math.ceil(elapsed / 50) + 1;
  assert.ok(counter.count <= polls, `${counter.count} statements for 200 waiters over ${elapsed} ms: one per poll at most (${polls})`);
  assert.ok(counter.count >= 3, `it did read (${counter.count} statements)`);
});

test('a job already out is answered at once, without a read', async () => {
  const { job } = await enqueueJob(store.db, { chain, action: 'redeem', idempotencyKey: 'wait:out', payload: {} });
  const counter = new StatementCounter();
  const wait = new SubmissionWait(store.db.withPlugin(counter), 50);
  const out = { ...job, status: 'submitted' as const };
  assert.equal(await wait.wait(out, 5_000), out);
  assert.equal(counter.count, 0);
});
