import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { leasedLoop } from '../src/lease-loop.ts';
import type { Store } from '../src/store/database.ts';
import { describeEachStore, openTestStore } from './helpers/stores.ts';

describeEachStore('leased loops', (kind) => {
  let store: Store;
  before(async () => {
    store = await openTestStore(kind);
  });
  after(() => store.close());

  test('two instances with one lease: only one runs the work; the other takes over when it stops', async () => {
    const ticks = { a: 0, b: 0 };
    const loop = (holder: 'a' | 'b') =>
      leasedLoop({ db: store.db, lease: 'watcher:test', holder, intervalMs: 20, tick: async () => void ticks[holder]++, onError: (e) => assert.fail(String(e)) });
    const a = loop('a');
    await new Promise((r) => setTimeout(r, 50));
    const b = loop('b');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(ticks.a >= 5, `a ticked ${ticks.a} times`);
    assert.equal(ticks.b, 0, 'b never ran while a held the lease');
    await a.stop(); // releases the lease
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(ticks.b >= 3, `b took over (${ticks.b} ticks)`);
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
    await new Promise((r) => setTimeout(r, 150));
    await loop.stop();
    assert.match(String(errors[0]), /rpc down/);
    assert.ok(calls >= 3);
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
    for (const end = Date.now() + 2_000; !started; await new Promise((r) => setTimeout(r, 5))) assert.ok(Date.now() < end, 'the first tick started');
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
});
