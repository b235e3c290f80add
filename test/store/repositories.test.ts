import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { after, before, test } from 'node:test';
import { createApp, findAppByKey, hashApiKey } from '../../src/store/apps.ts';
import { toRfc3339Micro, type Store } from '../../src/store/database.ts';
import { accrueOrderFees, listEarnings } from '../../src/store/affiliates.ts';
import { acquireLease, releaseLease } from '../../src/store/leases.ts';
import { findOrder, insertOrder, writeOrder } from '../../src/store/orders.ts';
import { syncRegistry } from '../../src/store/registry-sync.ts';
import {
  availableLiquidity,
  listLiquidity,
  releaseExpiredLiquidity,
  releaseOrderLiquidity,
  setSolverBalance,
  sharedLiquidityReads,
} from '../../src/store/solvers.ts';
import { Registry } from '../../src/chains/registry.ts';
import { secretCiphertexts } from '../../src/store/solver-queries.ts';
import { appendOrderEvents, lockEventHeads } from '../../src/store/order-events.ts';
import { ORDER_EVENT_CHANNEL } from '../../src/events/order-event.ts';
import { waitFor } from '../helpers/wait.ts';
import { describeEachStore, openTestStore, StatementCounter } from '../helpers/stores.ts';
import { localnetRegistry, randomHex32, sampleOrder, seedBasics, SOLVER } from '../helpers/fixtures.ts';
import { readFileSync } from 'node:fs';
import { LOCALNET_REGISTRY_PATH } from '../helpers/fixtures.ts';
import type { RegistryFile } from '../../src/chains/registry-schema.ts';

describeEachStore('repositories', (kind) => {
  let store: Store;
  let appId: string;
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
  });
  after(() => store.close());

  test('an app is found by its key, never by a wrong or malformed one, and only its hash is stored', async () => {
    const { app, key } = await createApp(store.db, { name: 'acme', gasless: true, defaultSlippage: 25 });
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.deepEqual(await findAppByKey(store.db, key), app);
    assert.equal(await findAppByKey(store.db, key.replace(/.$/, (c) => (c === '0' ? '1' : '0'))), undefined);
    assert.equal(await findAppByKey(store.db, key.toUpperCase()), undefined);
    const row = await store.db.selectFrom('apps').selectAll().where('id', '=', app.id).executeTakeFirstOrThrow();
    assert.equal(row.key_hash, hashApiKey(key));
    assert.ok(!JSON.stringify(row).includes(key), 'the plain key is not stored');
  });

  test('syncing the registry writes chains and assets, is repeatable, and deactivates removed assets', async () => {
    const registry = localnetRegistry();
    await syncRegistry(store.db, registry);
    const assets = await store.db.selectFrom('assets').selectAll().orderBy('id').execute();
    assert.equal(assets.length, registry.assets.length);
    const wbtc = assets.find((a) => a.id === 'ethereum_localnet:wbtc');
    assert.equal(wbtc?.min_amount, '1000');
    assert.deepEqual(wbtc?.listed_in, ['v2', 'v3']);

    const file = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as RegistryFile;
    file.chains[0]!.assets = file.chains[0]!.assets.filter((a) => a.symbol !== 'usdc');
    await syncRegistry(store.db, new Registry(file));
    const usdc = await store.db.selectFrom('assets').select('is_active').where('id', '=', 'ethereum_localnet:usdc').executeTakeFirstOrThrow();
    assert.equal(usdc.is_active, false);
    await syncRegistry(store.db, registry);
  });

  test('an order reads back exactly as written, with microsecond created_at', async () => {
    const order = sampleOrder(appId, {
      affiliateFees: [
        { address: '0x1111111111111111111111111111111111111111', fee: 30, asset: 'ethereum_localnet:usdc', amount: 28500n },
        { address: '0x2222222222222222222222222222222222222222', fee: 5, asset: 'ethereum_localnet:usdc', amount: 4750n },
      ],
    });
    order.source.amount = 2n ** 200n; // beyond any JS number
    await insertOrder(store.db, order);
    const read = await findOrder(store.db, order.id);
    assert.ok(read);
    assert.equal(read.source.amount, (2n ** 200n).toString());
    assert.equal(read.destination.amount, '99700');
    assert.equal(read.source.swapId, order.source.swapId);
    assert.equal(read.destination.redeemer, order.destination.redeemer);
    assert.equal(read.source.initiateBlockNumber, '0');
    assert.equal(read.source.initiateTimestamp, null);
    assert.equal(read.deadline, order.deadline.toString());
    assert.equal(read.secretHash, order.secretHash);
    assert.deepEqual(
      read.affiliateFees.map((f) => [f.address, f.fee, f.asset, f.amount]),
      [
        ['0x1111111111111111111111111111111111111111', 30, 'ethereum_localnet:usdc', '28500'],
        ['0x2222222222222222222222222222222222222222', 5, 'ethereum_localnet:usdc', '4750'],
      ],
    );
    assert.match(toRfc3339Micro(read.createdAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(Math.abs(Date.parse(toRfc3339Micro(read.createdAt)) - Date.now()) < 60_000);
    assert.equal(await findOrder(store.db, randomHex32()), undefined);
  });

  test("the sealed secrets of several orders come back in the callers' order, null where the service holds none", async () => {
    const sealed = Uint8Array.from([1, 2, 3, 4]);
    const held = sampleOrder(appId, { secretCiphertext: sealed });
    const none = sampleOrder(appId);
    await insertOrder(store.db, held);
    await insertOrder(store.db, none);
    const read = await secretCiphertexts(store.db, [none.id, held.id, randomHex32(), held.id]);
    assert.deepEqual(read.map((s) => (s ? [...s] : null)), [null, [1, 2, 3, 4], null, [1, 2, 3, 4]]);
  });

  test('one app cannot reuse a nonce, and a failed insert leaves nothing behind', async () => {
    const first = sampleOrder(appId, { nonce: 'same-nonce' });
    await insertOrder(store.db, first);
    const second = sampleOrder(appId, { nonce: 'same-nonce' });
    await assert.rejects(insertOrder(store.db, second));
    assert.equal(await findOrder(store.db, second.id), undefined);
    const swaps = await store.db.selectFrom('swaps').select('order_id').where('order_id', '=', second.id).execute();
    assert.equal(swaps.length, 0);
  });

  test('liquidity reservations: written with the order or not at all, released once per order', async () => {
    // Reserving is the production write (create_order, as POST /v2/orders runs it); its concurrency is
    // tested through the API (test/api/create-order.test.ts).
    const { app } = await createApp(store.db, { name: 'liquidity' });
    const asset = 'arbitrum_localnet:wbtc';
    await setSolverBalance(store.db, { solverId: SOLVER.id, asset, balance: 10_000_000n });
    const row = async () => (await listLiquidity(store.db)).find((r) => r.asset === asset)!;
    assert.equal((await row()).committed, 0n);

    const unpayable = sampleOrder(app.id);
    assert.equal(await writeOrder(store.db, unpayable, { solverId: SOLVER.id, asset: 'ethereum_localnet:usdc', amount: 1n }), false, 'no balance row');
    assert.equal(await findOrder(store.db, unpayable.id), undefined, 'a refused reservation writes nothing');

    const open = sampleOrder(app.id);
    const expired = sampleOrder(app.id, { deadline: BigInt(now() - 10) });
    const expiredButInitiated = sampleOrder(app.id, { deadline: BigInt(now() - 10) });
    for (const o of [open, expired, expiredButInitiated]) {
      assert.ok(await writeOrder(store.db, o, { solverId: SOLVER.id, asset, amount: o.destination.amount }));
    }
    await store.db.updateTable('swaps').set({ initiate_tx_hash: '0xabc' }).where('order_id', '=', expiredButInitiated.id).where('side', '=', 'source').execute();
    assert.equal((await row()).committed, 3n * 99_700n);

    assert.ok((await releaseExpiredLiquidity(store.db, now())) >= 1);
    assert.equal((await row()).committed, 2n * 99_700n, 'only the expired, never initiated order is released');
    assert.equal(await releaseExpiredLiquidity(store.db, now()), 0, 'a second sweep releases nothing');

    assert.equal(await releaseOrderLiquidity(store.db, open.id), true);
    assert.equal(await releaseOrderLiquidity(store.db, open.id), false, 'released once');
    assert.equal((await row()).committed, 99_700n);
    assert.equal((await availableLiquidity(store.db, asset)).get(SOLVER.id), 10_000_000n - 99_700n);

    // Quotes' reads: those made while one is in flight share it; one made after it reads again.
    const counter = new StatementCounter();
    const read = sharedLiquidityReads(store.db.withPlugin(counter));
    const burst = await Promise.all(Array.from({ length: 20 }, () => read(asset)));
    assert.equal(counter.count, 1, 'twenty reads at once: one query');
    assert.ok(burst.every((m) => m.get(SOLVER.id) === 10_000_000n - 99_700n));
    await setSolverBalance(store.db, { solverId: SOLVER.id, asset, balance: 20_000_000n });
    assert.equal((await read(asset)).get(SOLVER.id), 20_000_000n - 99_700n, 'a later read sees the new balance');
    assert.equal(counter.count, 2);
  });

  test('affiliate fees accrue once into the earnings totals', async () => {
    const { app } = await createApp(store.db, { name: 'affiliates' });
    const affiliate = '0x3333333333333333333333333333333333333333';
    const fee = { address: affiliate, fee: 30, asset: 'ethereum_localnet:usdc', amount: 1000n };
    const a = sampleOrder(app.id, { affiliateFees: [fee] });
    const b = sampleOrder(app.id, { affiliateFees: [{ ...fee, amount: 250n }] });
    await insertOrder(store.db, a);
    await insertOrder(store.db, b);
    assert.deepEqual(await listEarnings(store.db, app.id), []);
    assert.equal(await accrueOrderFees(store.db, a.id), 1);
    assert.equal(await accrueOrderFees(store.db, a.id), 0);
    await Promise.all([accrueOrderFees(store.db, b.id), accrueOrderFees(store.db, b.id)]);
    assert.deepEqual(await listEarnings(store.db, app.id), [
      { affiliate, asset: 'ethereum_localnet:usdc', appEarned: 1250n, totalEarned: 1250n, totalClaimed: 0n },
    ]);
    // Earned through another app too: each app lists its own part and the affiliate's total over both.
    const { app: other } = await createApp(store.db, { name: 'affiliates too' });
    const c = sampleOrder(other.id, { affiliateFees: [{ ...fee, amount: 40n }] });
    await insertOrder(store.db, c);
    assert.equal(await accrueOrderFees(store.db, c.id), 1);
    assert.deepEqual(await listEarnings(store.db, app.id), [
      { affiliate, asset: 'ethereum_localnet:usdc', appEarned: 1250n, totalEarned: 1290n, totalClaimed: 0n },
    ]);
    assert.deepEqual(await listEarnings(store.db, other.id), [
      { affiliate, asset: 'ethereum_localnet:usdc', appEarned: 40n, totalEarned: 1290n, totalClaimed: 0n },
    ]);
  });

  test('a worker lease has one holder until it expires', async () => {
    assert.equal(await acquireLease(store.db, 'watcher:ethereum_localnet', 'a', 60_000), true);
    assert.equal(await acquireLease(store.db, 'watcher:ethereum_localnet', 'b', 60_000), false);
    assert.equal(await acquireLease(store.db, 'watcher:ethereum_localnet', 'a', 60_000), true, 'renewal');
    assert.equal(await acquireLease(store.db, 'watcher:arbitrum_localnet', 'b', 1), true);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await acquireLease(store.db, 'watcher:arbitrum_localnet', 'c', 60_000), true, 'taken after expiry');
    await releaseLease(store.db, 'watcher:ethereum_localnet', 'a');
    assert.equal(await acquireLease(store.db, 'watcher:ethereum_localnet', 'b', 60_000), true, 'taken after release');
  });

  test('appended events take ids in the order given, move each order head, and notify the newest id once', async () => {
    const orders = [sampleOrder(appId), sampleOrder(appId), sampleOrder(appId)];
    for (const order of orders) await insertOrder(store.db, order);
    const heard: string[] = [];
    const stop = await store.listen(ORDER_EVENT_CHANNEL, { message: (id) => heard.push(id), connected: () => undefined });
    try {
      const given = [orders[1]!, orders[0]!, orders[2]!].map((o, i) => ({ orderId: o.id, appId, solverId: o.solverId, type: 'order.status', status: i === 1 ? 'initiate_detected' : 'created', orderJson: `{"n":${i}}`, failures: '' }) as const);
      const appended = await store.db.transaction().execute(async (trx) => {
        await lockEventHeads(trx, []);
        return appendOrderEvents(trx, given);
      });
      assert.deepEqual(
        appended.map((e) => [e.orderId, e.status, e.orderJson]),
        given.map((e) => [e.orderId, e.status, e.orderJson]),
      );
      assert.ok(appended.every((e, i) => i === 0 || BigInt(e.id) > BigInt(appended[i - 1]!.id)), 'ids in the order given');
      const heads = await store.db.transaction().execute((trx) => lockEventHeads(trx, orders.map((o) => o.id)));
      for (const e of given) assert.deepEqual(heads.get(e.orderId), { status: e.status, failures: '' });
      await waitFor(() => heard.length > 0, 2_000, 'the notification');
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(heard, [appended.at(-1)!.id], 'one notification, the newest id');
    } finally {
      await stop();
    }
  });
});

describeEachStore('database connection loss', (kind) => {
  test('a server that drops idle connections does not crash the process; the next query reconnects', { skip: kind === 'pglite' && 'PGlite has no server connections' }, async () => {
    const store = await openTestStore(kind);
    try {
      await sql`select 1`.execute(store.db);
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      const killed = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
        new URL(store.url!).pathname.slice(1),
      ]);
      await admin.end();
      assert.ok(killed.rowCount! > 0, 'a pooled connection was terminated');
      await new Promise((r) => setTimeout(r, 100));
      const { rows } = await sql<{ n: number }>`select 1 as n`.execute(store.db);
      assert.equal(rows[0]?.n, 1);
    } finally {
      await store.close();
    }
  });
});
