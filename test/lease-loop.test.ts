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
    const stopA = loop('a');
    await new Promise((r) => setTimeout(r, 50));
    const stopB = loop('b');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(ticks.a >= 5, `a ticked ${ticks.a} times`);
    assert.equal(ticks.b, 0, 'b never ran while a held the lease');
    await stopA(); // releases the lease
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(ticks.b >= 3, `b took over (${ticks.b} ticks)`);
    await stopB();
  });

  test('an error in the work is reported and the loop goes on', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const stop = leasedLoop({
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
    await stop();
    assert.match(String(errors[0]), /rpc down/);
    assert.ok(calls >= 3);
  });
});
