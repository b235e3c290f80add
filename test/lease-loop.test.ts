import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { LeaseHeartbeat, leasedLoop } from '../src/lease-loop.ts';
import type { Store } from '../src/store/database.ts';
import { describeEachStore, openTestStore } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

/** Waits until `done()` holds, failing with `what` after `ms`. */
async function waitUntil(done: () => boolean, what: string, ms = 2_000): Promise<void> {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 5))) assert.ok(Date.now() < end, what);
}

describeEachStore('leased loops', (kind) => {
  let store: Store & { url?: string };
  before(async () => {
    store = await openTestStore(kind);
  });
  after(() => store.close());

  test('two instances with one lease: only one runs the work; the other takes over when it stops', async () => {
    const ticks = { a: 0, b: 0 };
    const loop = (holder: 'a' | 'b') =>
      leasedLoop({ db: store.db, lease: 'watcher:test', holder, intervalMs: 20, tick: async () => void ticks[holder]++, onError: (e) => assert.fail(String(e)) });
    const a = loop('a');
    await waitUntil(() => ticks.a >= 1, 'a ticked');
    const b = loop('b'); // asks at once, then every 20 ms
    const aBefore = ticks.a;
    await waitUntil(() => ticks.a >= aBefore + 5, 'a ticked five more times while b asked');
    assert.equal(ticks.b, 0, 'b never ran while a held the lease');
    await a.stop(); // releases the lease
    await waitUntil(() => ticks.b >= 3, 'b took over');
    await b.stop();
  });

  test('an error in the work is reported and the loop goes on', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const loop = leasedLoop({
      db: store.db,
      lease: 'flaky',
      holder: 'x',
      intervalMs: 10,
      tick: async () => {
        calls++;
        if (calls === 1) throw new Error('rpc down');
      },
      onError: (e) => errors.push(e),
    });
    await waitUntil(() => calls >= 3, 'the loop went on after the failure');
    await loop.stop();
    assert.match(String(errors[0]), /rpc down/);
  });

  test('stop() aborts the tick in progress, waits for it, and does not report the abort as a failure', async () => {
    const errors: unknown[] = [];
    let started = false;
    let finished = false;
    const loop = leasedLoop({
      db: store.db,
      lease: 'stoppable',
      holder: 'x',
      intervalMs: 60_000,
      // A wait that would outlast any shutdown (a receipt from a dead node) unless the signal ends it.
      tick: async (signal) => {
        started = true;
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
        finished = true;
      },
      onError: (e) => errors.push(e),
    });
    await waitUntil(() => started, 'the first tick started');
    const t0 = Date.now();
    await loop.stop();
    assert.ok(Date.now() - t0 < 1_000, `stopped in ${Date.now() - t0} ms`);
    assert.equal(finished, false);
    assert.deepEqual(errors, []);
  });

  test('wake() runs a tick at once; wakes during a tick coalesce into one more tick', async () => {
    let ticks = 0;
    let release: () => void = () => undefined;
    let gate: Promise<void> | undefined;
    const loop = leasedLoop({
      db: store.db,
      lease: 'woken',
      holder: 'x',
      intervalMs: 60_000,
      tick: async () => {
        ticks++;
        if (gate) await gate;
      },
      onError: (e) => assert.fail(String(e)),
    });
    const until = async (n: number) => {
      for (const end = Date.now() + 2_000; ticks < n; ) {
        assert.ok(Date.now() < end, `only ${ticks} ticks, waited for ${n}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await until(1); // the first tick runs on start
    loop.wake();
    await until(2); // long before the 60 s interval
    gate = new Promise<void>((r) => (release = r));
    loop.wake();
    await until(3); // a tick that waits on the gate
    for (let i = 0; i < 10; i++) loop.wake();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ticks, 3, 'wakes during a tick do not start another one alongside it');
    gate = undefined;
    release();
    await until(4);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ticks, 4, 'ten wakes during one tick made exactly one more tick');
    await loop.stop();
    loop.wake();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ticks, 4, 'a stopped loop does not wake');
  });

  test('a tick may set the wait before the next (sooner or later than the interval); wake() still runs one at once', async () => {
    const at: number[] = [];
    let nextMs: number | undefined = 30;
    const loop = leasedLoop({
      db: store.db,
      lease: 'paced',
      holder: 'x',
      intervalMs: 1_000,
      tick: async () => {
        at.push(Date.now());
        return nextMs;
      },
      onError: (e) => assert.fail(String(e)),
    });
    await waitUntil(() => at.length >= 4, 'ticks 30 ms apart, not 1 s', 500);
    nextMs = 60_000;
    await waitUntil(() => at.length >= 5, 'a tick asking for a minute');
    const before = at.length;
    await new Promise((r) => setTimeout(r, 1_300));
    assert.equal(at.length, before, 'no tick at the interval: the tick asked for a minute');
    nextMs = undefined;
    loop.wake();
    await waitUntil(() => at.length === before + 1, 'woken at once', 500);
    await waitUntil(() => at.length === before + 2, 'then back to the interval', 1_500);
    await loop.stop();
  });

  test('a holder that loses its lease while sleeping long asks for it again within the interval', async () => {
    let ticks = 0;
    const loop = leasedLoop({
      db: store.db,
      lease: 'sleeper',
      holder: 'a',
      intervalMs: 100,
      ttlMs: 300,
      tick: async () => {
        ticks++;
        return 60_000;
      },
      onError: () => undefined,
    });
    await waitUntil(() => ticks === 1, 'a ticked, then sleeps a minute');
    await sql`update worker_leases set holder = 'b', expires_at = now() + interval '200 milliseconds' where name = 'sleeper'`.execute(store.db);
    await waitUntil(() => ticks === 2, 'a took the lease back once b let it run out', 2_000);
    await loop.stop();
  });

  test('a holder keeps its lease between ticks longer apart than the lease lives', async () => {
    const ticks = { a: 0, b: 0 };
    const loop = (holder: 'a' | 'b') =>
      leasedLoop({ db: store.db, lease: 'slow', holder, intervalMs: 60_000, ttlMs: 300, tick: async () => void ticks[holder]++, onError: () => undefined });
    const a = loop('a');
    await waitUntil(() => ticks.a === 1, 'a ticked');
    const b = loop('b');
    // Leases run on real time (src/lease-loop.ts): three lease lives pass, seen as the heartbeat's renewals.
    const expiry = async () => (await sql<{ ms: number }>`select extract(epoch from expires_at)::float8 * 1000 as ms from worker_leases where name = 'slow'`.execute(store.db)).rows[0]!.ms;
    const first = await expiry();
    await waitFor(async () => (await expiry()) >= first + 3 * 300, 5_000, 'the heartbeat renewing the lease for three more lives');
    b.wake();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ticks.a, 1);
    assert.equal(ticks.b, 0, 'b never got the lease: the heartbeat renewed it');
    await Promise.all([a.stop(), b.stop()]);
  });

  test('a holder whose lease is taken aborts its tick in progress', async () => {
    const errors: unknown[] = [];
    let aborted: number | undefined;
    let started = false;
    const loop = leasedLoop({
      db: store.db,
      lease: 'taken',
      holder: 'a',
      intervalMs: 60_000,
      ttlMs: 300,
      tick: async (signal) => {
        started = true;
        await new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = Date.now();
            reject(signal.reason as Error);
          }),
        );
      },
      onError: (e) => errors.push(e),
    });
    await waitUntil(() => started, 'the tick started');
    // Another instance holds it now (as after a pause longer than the lease: the lease ran out and was taken).
    const takenAt = Date.now();
    await sql`update worker_leases set holder = 'b', expires_at = now() + interval '1 hour' where name = 'taken'`.execute(store.db);
    await waitUntil(() => aborted !== undefined, 'the tick was aborted');
    const abortedAfter = aborted! - takenAt;
    assert.ok(abortedAfter < 500, `aborted ${abortedAfter} ms after the lease was taken`);
    assert.match(String(errors[0]), /taken by another instance/);
    await loop.stop();
  });

  test("one heartbeat renews all of an instance's leases; a lease taken from it aborts that loop only", async () => {
    const heartbeat = new LeaseHeartbeat(store.db, 'one', 300);
    const ticks = { kept: 0, taken: 0 };
    const errors: unknown[] = [];
    let takenAborted = false;
    const kept = leasedLoop({ db: store.db, lease: 'hb:kept', holder: 'one', heartbeat, intervalMs: 50, tick: async () => void ticks.kept++, onError: (e) => errors.push(e) });
    const taken = leasedLoop({
      db: store.db,
      lease: 'hb:taken',
      holder: 'one',
      heartbeat,
      intervalMs: 60_000,
      tick: async (signal) => {
        ticks.taken++;
        await new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            takenAborted = true;
            reject(signal.reason as Error);
          }),
        );
      },
      onError: (e) => errors.push(e),
    });
    await waitUntil(() => ticks.kept >= 1 && ticks.taken === 1, 'both ticked');
    const expiries = async () =>
      Object.fromEntries(
        (await sql<{ name: string; ms: number }>`select name, extract(epoch from expires_at)::float8 * 1000 as ms from worker_leases where name like 'hb:%'`.execute(store.db)).rows.map((r) => [r.name, r.ms]),
      );
    const first = await expiries();
    await waitFor(async () => {
      const now = await expiries();
      return now['hb:kept']! >= first['hb:kept']! + 3 * 300 && now['hb:taken']! >= first['hb:taken']! + 3 * 300;
    }, 5_000, 'the heartbeat renewing both leases for three more lives');
    await sql`update worker_leases set holder = 'other', expires_at = now() + interval '1 hour' where name = 'hb:taken'`.execute(store.db);
    await waitUntil(() => takenAborted, 'the loop whose lease was taken aborted its tick');
    assert.match(String(errors[0]), /hb:taken: the lease was taken by another instance/);
    const keptTicks = ticks.kept;
    await waitUntil(() => ticks.kept >= keptTicks + 3, 'the other loop went on');
    assert.equal(errors.length, 1, 'only the loop whose lease was taken heard of it');
    assert.throws(() => leasedLoop({ db: store.db, lease: 'hb:x', holder: 'two', heartbeat, intervalMs: 50, tick: async () => undefined, onError: () => undefined }), /another holder/);
    await Promise.all([kept.stop(), taken.stop()]);
  });

  if (kind === 'postgres') {
    test('an instance killed with SIGKILL: another takes over its worker within 5 s', async () => {
      const url = store.url!;
      const child = spawn(process.execPath, ['--import', 'tsx', new URL('./helpers/lease-holder.ts', import.meta.url).pathname, url, 'killed'], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        const [first] = (await once(child.stdout, 'data')) as [Buffer];
        assert.match(first.toString(), /tick/);
        let tookOver: number | undefined;
        const survivor = leasedLoop({ db: store.db, lease: 'killed', holder: 'survivor', intervalMs: 200, tick: async () => void (tookOver ??= Date.now()), onError: () => undefined });
        await new Promise((r) => setTimeout(r, 1_500));
        assert.equal(tookOver, undefined, 'the survivor waits while the holder lives');
        const killedAt = Date.now();
        child.kill('SIGKILL');
        await waitUntil(() => tookOver !== undefined, 'the survivor took over', 10_000);
        const after = tookOver! - killedAt;
        assert.ok(after <= 5_000, `took over ${after} ms after the kill`);
        assert.ok(after >= 1_000, `took over ${after} ms after the kill: the dead holder's lease still had time to run`);
        await survivor.stop();
      } finally {
        child.kill('SIGKILL');
      }
    });
  }
});
