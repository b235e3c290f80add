// A watcher's poll recorded in one statement (recordWatcherPoll, migration 0019): events, kept
// blocks, cursor, confirmations and height together or not at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listChainHeights } from '../../src/store/chain-heights.ts';
import type { Store } from '../../src/store/database.ts';
import { findOrder, insertOrder } from '../../src/store/orders.ts';
import { recordWatcherPoll, watchedBlocks, watcherCursor } from '../../src/store/swap-events.ts';
import { randomHex32, sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';

const CHAIN = 'ethereum_localnet';

describeEachStore('a watcher poll recorded in one statement', (kind) => {
  let store: Store;
  let appId: string;

  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
  });
  after(() => store.close());

  const newOrder = async (requiredConfirmations = 3) => {
    const order = sampleOrder(appId);
    order.source.requiredConfirmations = requiredConfirmations;
    await insertOrder(store.db, order);
    return order;
  };
  const initiated = (swapId: string, blockNumber: bigint) => ({
    kind: 'initiated' as const,
    swapId,
    txHash: `0x${randomHex32()}`,
    blockNumber,
    timestamp: new Date(1_700_000_000_000 + Number(blockNumber) * 1000),
    amount: 100000n,
  });

  test('records the events, the kept blocks, the cursor, the counts and the height; the same poll again changes nothing', async () => {
    const order = await newOrder();
    const event = initiated(order.source.swapId, 10n);
    const blocks = [9n, 10n, 11n].map((number) => ({ number, hash: `0x${number.toString(16).padStart(64, '0')}` }));
    const poll = { events: [event], head: 11n, blocks: { kept: blocks, keepAbove: 9n }, cursor: { from: undefined, to: 11n } };
    assert.equal(await recordWatcherPoll(store.db, CHAIN, poll), 2, 'the initiate, then its confirmation count');
    const source = (await findOrder(store.db, order.id))!.source;
    assert.equal(source.initiateTxHash, event.txHash);
    assert.equal(source.initiateBlockNumber, '10');
    assert.equal(source.currentConfirmations, 2);
    assert.deepEqual(
      (await watchedBlocks(store.db, CHAIN)).map((b) => b.number),
      [11n, 10n],
      'blocks at or below keepAbove are dropped',
    );
    assert.equal(await watcherCursor(store.db, CHAIN), 11n);
    assert.equal((await listChainHeights(store.db)).get(CHAIN), 11n);

    assert.equal(await recordWatcherPoll(store.db, CHAIN, { events: [event], head: 11n }), 0);
    assert.equal(await recordWatcherPoll(store.db, CHAIN, { events: [], head: 12n, cursor: { from: 11n, to: 12n } }), 1, 'the count reaches 3');
    assert.equal((await findOrder(store.db, order.id))!.source.currentConfirmations, 3);
    assert.equal(await recordWatcherPoll(store.db, CHAIN, { events: [], head: 20n, cursor: { from: 12n, to: 20n } }), 0, 'capped at the required count');
  });

  test('a cursor another writer moved refuses the whole poll: no event, block, count or height of it is written', async () => {
    const order = await newOrder();
    const cursor = (await watcherCursor(store.db, CHAIN))!;
    const heights = await listChainHeights(store.db);
    const stale = { events: [initiated(order.source.swapId, cursor + 1n)], head: cursor + 1n, blocks: { kept: [{ number: cursor + 1n, hash: '0xab' }], keepAbove: 0n } };
    await assert.rejects(recordWatcherPoll(store.db, CHAIN, { ...stale, cursor: { from: cursor - 1n, to: cursor + 1n } }), /the ethereum_localnet watcher cursor moved under this watcher/);
    await assert.rejects(recordWatcherPoll(store.db, CHAIN, { ...stale, cursor: { from: undefined, to: cursor + 1n } }), /moved under this watcher/, 'a first cursor where one exists');
    assert.equal((await findOrder(store.db, order.id))!.source.initiateBlockNumber, '0');
    assert.equal(await watcherCursor(store.db, CHAIN), cursor);
    assert.ok(!(await watchedBlocks(store.db, CHAIN)).some((b) => b.hash === '0xab'));
    assert.deepEqual(await listChainHeights(store.db), heights);
  });

  test('each event writes its own fields; the later of two of a kind for one swap wins; unknown swaps are ignored', async () => {
    const order = await newOrder(1);
    const first = initiated(order.source.swapId, 30n);
    const later = initiated(order.source.swapId, 31n);
    const redeemed = { kind: 'redeemed' as const, swapId: order.source.swapId, txHash: `0x${randomHex32()}`, blockNumber: 32n, timestamp: new Date(), secret: randomHex32() };
    const changed = await recordWatcherPoll(store.db, CHAIN, { events: [first, later, redeemed, initiated(randomHex32(), 31n)], head: 32n });
    assert.equal(changed, 3, 'the initiate, the redeem and the count of one swap');
    const source = (await findOrder(store.db, order.id))!.source;
    assert.equal(source.initiateTxHash, later.txHash);
    assert.equal(source.redeemTxHash, redeemed.txHash);
    assert.equal(source.secret, redeemed.secret);
    assert.equal(source.currentConfirmations, 1);
  });
});
