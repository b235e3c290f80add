import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { setSolverSuspended, solverRecords, suspendOverdueSolvers } from '../../src/store/solver-records.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;
const FUND_WITHIN = 300;
// ethereum_localnet: one confirmation of 1 s blocks, so an order falls due 301 s after its source's initiate block.
const ALLOWED = 1 + FUND_WITHIN;

describeEachStore("solvers' records and standing: late, unfilled, suspended from quoting, restored", (kind) => {
  let t: TestApi;
  let nonce = 0;
  const now = () => Math.floor(Date.now() / 1000);
  before(async () => {
    t = await openTestApi(kind, undefined, { solverStandingMs: 0, solverFundWithinSeconds: FUND_WITHIN });
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 50_000_000n });
  });
  after(() => t.close());

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.api.inject({ method, url, headers: { 'service-app-id': t.key }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  const order = () =>
    call('POST', '/v2/orders', {
      source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
      nonce: String(++nonce),
    });
  const newOrder = async (): Promise<string> => {
    const created = await order();
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.result.order_id as string;
  };
  /** The source initiated and confirmed `agoSeconds` ago (its block's time), and the destination `fundedAfter` seconds after it. */
  const initiated = async (orderId: string, agoSeconds: number, fundedAfter?: number) => {
    const at = now() - agoSeconds;
    await sql`update swaps set initiate_tx_hash = '0x01', initiate_block_number = 7, current_confirmations = required_confirmations,
      initiate_timestamp = to_timestamp(${at}::float8) where order_id = ${orderId} and side = 'source'`.execute(t.store.db);
    if (fundedAfter !== undefined) {
      await sql`update swaps set initiate_tx_hash = '0x02', initiate_block_number = 9, initiate_timestamp = to_timestamp(${at + fundedAfter}::float8)
        where order_id = ${orderId} and side = 'destination'`.execute(t.store.db);
    }
  };
  const record = async () => (await solverRecords(t.store.db, { nowUnix: now(), fundWithinSeconds: FUND_WITHIN })).find((r) => r.solverId === SOLVER.id)!;
  const suspend = () => suspendOverdueSolvers(t.store.db, { nowUnix: now(), fundWithinSeconds: FUND_WITHIN });

  test('funded in time, funded late, still within its time, excused: a record, and no suspension', async () => {
    await initiated(await newOrder(), 100, 20);
    await initiated(await newOrder(), 1_000, ALLOWED + 40);
    await initiated(await newOrder(), ALLOWED - 60);
    // Rule 5: an instant refund co-signed, so the solver must not fund; and a source initiated after the order's deadline.
    const consented = await newOrder();
    await initiated(consented, 2_000);
    await t.store.db.updateTable('orders').set({ instant_refund_signed: true }).where('id', '=', consented).execute();
    const late = await newOrder();
    await initiated(late, 2_000);
    await t.store.db.updateTable('orders').set({ deadline: String(now() - 3_000) }).where('id', '=', late).execute();
    await newOrder(); // never initiated

    assert.deepEqual(await record(), {
      solverId: SOLVER.id,
      matched: 6,
      filled: 2,
      filledLate: 1,
      unfilled: 0,
      medianSecondsToFund: (20 + ALLOWED + 40) / 2,
      suspended: false,
      suspendedReason: null,
    });
    assert.deepEqual(await suspend(), []);
  });

  test('a confirmed source left unfunded past its time suspends the solver: quotes and orders refuse, liquidity and metrics show it', async () => {
    const overdue = await newOrder();
    await initiated(overdue, ALLOWED + 5);
    assert.equal((await record()).unfilled, 1);
    assert.deepEqual(await suspend(), [{ solverId: SOLVER.id, orderId: overdue }]);
    assert.deepEqual(await suspend(), [], 'once');

    const quote = await call('GET', '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000');
    assert.deepEqual([quote.status, quote.body.code], [400, 'no_route']);
    assert.match(quote.body.error, /^no solver quotes ethereum_localnet:wbtc -> arbitrum_localnet:wbtc now: suspended \(0x7099[0-9a-f]*: left the confirmed source of order/);
    const refused = await order();
    assert.deepEqual([refused.status, refused.body.code], [400, 'no_route']);

    const liquidity = (await call('GET', '/v2/liquidity')).body.result as Json[];
    assert.equal(liquidity[0]!.record.suspended, true);
    assert.match(liquidity[0]!.record.suspended_reason, new RegExp(`left the confirmed source of order ${overdue} unfunded past its due time`));
    assert.equal(liquidity[0]!.record.unfilled, 1);
    const metrics = (await t.api.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, new RegExp(`hashlock_solver_suspended\\{solver="${SOLVER.id}"\\} 1`));
    assert.match(metrics, new RegExp(`hashlock_solver_orders\\{solver="${SOLVER.id}",outcome="unfilled"\\} 1`));
  });

  test('restored by the operator, it quotes again; only an order falling due after the restore suspends it again', async () => {
    assert.equal(await setSolverSuspended(t.store.db, SOLVER.id, null), true);
    const quote = await call('GET', '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000');
    assert.equal(quote.status, 200, JSON.stringify(quote.body));
    assert.deepEqual(await suspend(), [], 'the order that fell due before the restore');
    const next = await newOrder();
    await initiated(next, ALLOWED - 2);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.deepEqual(await suspend(), [{ solverId: SOLVER.id, orderId: next }]);
    assert.equal(await setSolverSuspended(t.store.db, 'nobody', null), false);
  });
});
