// One definition of order status: on random order and swap states, chain heights and clocks, every path
// that reads a status gives the answer of `orderStatus` (src/orders/status.ts): the order list's status
// filter, the event log's searches (orders whose recorded status is out of date, orders time alone has
// moved) and the solver's selections, on PGlite and PostgreSQL. The states are drawn from small ranges,
// so that heights land on, just below and just above the timelocks, and clocks on the deadlines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STATUS_GROUP_NAMES, STATUS_GROUPS } from '../../src/orders/status-groups.ts';
import {
  CLOCK_MOVES,
  holds,
  ORDER_STATUSES,
  orderStatus,
  readsClock,
  STATUS_RULES,
  type Condition,
  type OrderStatus,
  type StatusClock,
} from '../../src/orders/status.ts';
import { listChainHeights } from '../../src/store/chain-heights.ts';
import type { Store } from '../../src/store/database.ts';
import { listOrderIds } from '../../src/store/order-list.ts';
import { ordersMovedByTime, ordersToRecheck } from '../../src/store/order-events.ts';
import { findOrder, findOrders, insertOrder, type OrderRecord, type SwapRecord } from '../../src/store/orders.ts';
import { SOLVER_CONDITIONS, SOLVER_OWN_STEPS, SOLVER_STEPS, solverWork } from '../../src/store/solver-queries.ts';
import { statusInSql } from '../../src/store/status-sql.ts';
import { sampleOrder, seedBasics, SOLVER } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { mulberry32 } from '../helpers/seeded-random.ts';

const NOW = 1_900_000_000;
const CHAINS = ['ethereum_localnet', 'arbitrum_localnet'] as const;
const TXS = ['initiate', 'redeem', 'refund'] as const;

type SwapState = Pick<
  SwapRecord,
  | 'timelock'
  | 'secret'
  | 'initiateTxHash'
  | 'redeemTxHash'
  | 'refundTxHash'
  | 'initiateBlockNumber'
  | 'redeemBlockNumber'
  | 'refundBlockNumber'
  | 'requiredConfirmations'
  | 'currentConfirmations'
>;

/** A swap's facts: each transaction absent, seen or in a block; confirmations; a timelock; maybe the secret. */
function swapState(random: () => number, side: string): SwapState {
  const int = (n: number) => Math.floor(random() * n);
  const state = {
    timelock: String(1 + int(12)),
    secret: random() < 0.5 ? '' : 'ab'.repeat(32),
    requiredConfirmations: int(4),
    currentConfirmations: int(4),
  } as SwapState;
  for (const tx of TXS) {
    // Later transactions are rarer, so that every status, the ones below the redeems too, is common.
    const absent = tx === 'initiate' ? 0.45 : 0.75;
    const r = random();
    state[`${tx}TxHash`] = r < absent ? '' : `0x${side}${tx}${int(1e9)}`;
    state[`${tx}BlockNumber`] = r < absent + (1 - absent) / 3 ? '0' : String(1 + int(tx === 'initiate' ? 12 : 30));
  }
  return state;
}

type Clock = StatusClock;

/** A clock near NOW, with heights around the sums of the initiate blocks and timelocks (2..24), some unknown. */
function randomClock(random: () => number): Clock {
  const heights = new Map<string, bigint>();
  for (const chain of CHAINS) if (random() < 0.8) heights.set(chain, BigInt(Math.floor(random() * 30)));
  return { unixSeconds: NOW + Math.floor(random() * 7) - 3, heights };
}

/** A clock at most a few seconds and blocks before `later` (a height it knows may be unknown before). */
function earlierClock(random: () => number, later: Clock): Clock {
  const heights = new Map<string, bigint>();
  for (const [chain, height] of later.heights) {
    const back = BigInt(Math.floor(random() * 4));
    if (random() < 0.85) heights.set(chain, height > back ? height - back : 0n);
  }
  return { unixSeconds: later.unixSeconds - Math.floor(random() * 4), heights };
}

describe('the status rules', () => {
  const hasNot = (c: Condition): boolean =>
    'not' in c ? true : 'all' in c ? c.all.some(hasNot) : 'any' in c ? c.any.some(hasNot) : false;

  test('are monotone: no rule negates a fact', () => {
    assert.deepEqual(STATUS_RULES.filter(([, rule]) => hasNot(rule)).map(([status]) => status), []);
  });

  test('CLOCK_MOVES names exactly the rules that read the clock', () => {
    assert.deepEqual(
      [...CLOCK_MOVES.keys()].sort(),
      STATUS_RULES.filter(([, rule]) => readsClock(rule)).map(([status]) => status).sort(),
    );
  });

  test('time and heights alone move a status only as CLOCK_MOVES says (20,000 random states)', () => {
    const random = mulberry32(22);
    const moves = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const order = {
        deadline: String(NOW + Math.floor(random() * 7) - 3),
        source: { chain: CHAINS[0], ...swapState(random, 's') },
        destination: { chain: CHAINS[1], ...swapState(random, 'd') },
      } as OrderRecord;
      const later = randomClock(random);
      const before = orderStatus(order, earlierClock(random, later));
      const now = orderStatus(order, later);
      if (before === now) continue;
      moves.add(`${before} -> ${now}`);
      assert.ok(CLOCK_MOVES.get(now as never)?.includes(before), `${before} -> ${now} by time alone, in state ${JSON.stringify(order)}`);
    }
    const expected = [...CLOCK_MOVES].flatMap(([to, from]) => from.map((f) => `${f} -> ${to}`));
    assert.deepEqual([...moves].sort(), expected.sort(), 'the states exercise every move');
  });
});

describeEachStore('every path gives the status of orderStatus', (kind) => {
  let store: Store;
  const ids: string[] = [];
  const random = mulberry32(kind === 'pglite' ? 1 : 2);

  before(async () => {
    store = await openTestStore(kind);
    const { app } = await seedBasics(store.db);
    for (let i = 0; i < 120; i++) {
      const order = sampleOrder(app.id, {
        deadline: BigInt(NOW + Math.floor(random() * 7) - 3),
        // What the solver's selections ask beyond the status facts holds for every order: the service
        // holds the secret and the client's source key, the client consented to an instant refund, a
        // fee is pending. So the selections differ only where the facts do.
        secretCiphertext: new Uint8Array([1]),
        delegateKeyCiphertext: new Uint8Array([2]),
        affiliateFees: [{ address: '0x00000000000000000000000000000000000000aa', fee: 10, asset: 'ethereum_localnet:wbtc', amount: 1n }],
      });
      order.source.delegate = 'cd'.repeat(32);
      await insertOrder(store.db, order);
      await store.db.updateTable('orders').set({ instant_refund_consent: JSON.stringify({ signatures: [] }) }).where('id', '=', order.id).execute();
      for (const side of ['source', 'destination'] as const) {
        const s = swapState(random, side[0]!);
        await store.db
          .updateTable('swaps')
          .set({
            timelock: s.timelock,
            secret: s.secret,
            initiate_tx_hash: s.initiateTxHash,
            redeem_tx_hash: s.redeemTxHash,
            refund_tx_hash: s.refundTxHash,
            initiate_block_number: s.initiateBlockNumber,
            redeem_block_number: s.redeemBlockNumber,
            refund_block_number: s.refundBlockNumber,
            required_confirmations: s.requiredConfirmations,
            current_confirmations: s.currentConfirmations,
          })
          .where('order_id', '=', order.id)
          .where('side', '=', side)
          .execute();
      }
      ids.push(order.id);
    }
  });
  after(() => store.close());

  async function setClock(clock: Clock): Promise<StatusClock> {
    await store.db.deleteFrom('chain_heights').execute();
    // Heights alone: a watcher's poll would also recount the swaps' confirmations this test set.
    const rows = [...clock.heights].map(([chain, height]) => ({ chain, height }));
    if (rows.length > 0) await store.db.insertInto('chain_heights').values(rows).execute();
    return { unixSeconds: clock.unixSeconds, heights: await listChainHeights(store.db) };
  }

  async function setHeads(heads: ReadonlyMap<string, OrderStatus>): Promise<void> {
    await store.db.deleteFrom('order_event_heads').execute();
    const rows = [...heads].map(([orderId, status], i) => ({ order_id: orderId, status, event_id: String(i + 1) }));
    if (rows.length > 0) await store.db.insertInto('order_event_heads').values(rows).execute();
  }

  const sorted = (list: Iterable<string>) => [...list].sort();

  test('on 120 random orders at 8 random clocks', async () => {
    const orders = await findOrders(store.db, ids);
    assert.equal(orders.length, ids.length);
    const seen = new Set<OrderStatus>();
    const solver = { solverId: SOLVER.id, serviceSteps: true, chains: [...CHAINS], limit: 1_000 };
    for (let round = 0; round < 8; round++) {
      const clock = await setClock(randomClock(random));
      const now = clock.unixSeconds;
      const statuses = new Map(orders.map((o) => [o.id, orderStatus(o, clock)]));
      const having = (wanted: readonly OrderStatus[]) => sorted(orders.filter((o) => wanted.includes(statuses.get(o.id)!)).map((o) => o.id));
      const at = `round ${round}, clock ${JSON.stringify({ now, heights: Object.fromEntries(clock.heights) }, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`;
      for (const status of statuses.values()) seen.add(status);

      // The order list: each status group, as GET /v2/orders?status= asks it.
      for (const group of STATUS_GROUP_NAMES) {
        const listed = await listOrderIds(store.db, { statusGroups: [group], nowUnix: now, page: 1, perPage: 1_000 });
        assert.deepEqual(sorted(listed.ids), having(STATUS_GROUPS[group]), `list ${group}, ${at}`);
      }
      // The list's status predicate for each status alone, and for random sets of statuses.
      const statusSets = [...ORDER_STATUSES.map((s) => [s]), ...Array.from({ length: 6 }, () => ORDER_STATUSES.filter(() => random() < 0.4))];
      for (const wanted of statusSets) {
        const rows = await store.db
          .selectFrom('orders as o')
          .innerJoin('swaps as s', (j) => j.onRef('s.order_id', '=', 'o.id').on('s.side', '=', 'source'))
          .innerJoin('swaps as d', (j) => j.onRef('d.order_id', '=', 'o.id').on('d.side', '=', 'destination'))
          .select('o.id')
          .where(statusInSql(wanted, now))
          .execute();
        assert.deepEqual(sorted(rows.map((r) => r.id)), having(wanted), `statuses ${wanted.join(',')}, ${at}`);
      }

      // The event log, rechecking: heads missing, right or wrong; the wrong and missing ones are stale.
      const heads = new Map<string, OrderStatus>();
      const stale: string[] = [];
      for (const o of orders) {
        const r = random();
        const status = statuses.get(o.id)!;
        if (r < 0.25) stale.push(o.id);
        else if (r < 0.6) heads.set(o.id, status);
        else {
          const others = ORDER_STATUSES.filter((s) => s !== status);
          heads.set(o.id, others[Math.floor(random() * others.length)]!);
          stale.push(o.id);
        }
      }
      await setHeads(heads);
      const found: string[] = [];
      for (let after: string | undefined = ''; after !== undefined; ) {
        const page = await ordersToRecheck(store.db, after, 7, now);
        found.push(...page.stale);
        after = page.last;
      }
      assert.deepEqual(sorted(found), sorted(stale), `recheck, ${at}`);

      // The event log, time passing: heads recorded at an earlier clock; what time alone has moved since.
      const earlier = earlierClock(random, clock);
      const before = new Map(orders.map((o) => [o.id, orderStatus(o, earlier)]));
      await setHeads(before);
      const moved = orders.filter((o) => before.get(o.id) !== statuses.get(o.id)).map((o) => o.id);
      assert.deepEqual(sorted(await ordersMovedByTime(store.db, now, 1_000)), sorted(moved), `moved by time, ${at}`);

      // The solver's selections: SQL and orderStatus's reading of the same conditions.
      const selected = (condition: Condition, extra: (o: OrderRecord) => boolean = () => true) =>
        sorted(orders.filter((o) => holds(condition, o, clock) && extra(o)).map((o) => o.id));
      const { steps: work, orders: read } = await solverWork(store.db, { ...solver, nowSeconds: now });
      // The pass's orders come with its work, read as findOrders reads them.
      const wanted = sorted([...new Set(Object.values(work).flat())]);
      assert.deepEqual(sorted([...read.keys()]), wanted, `the orders read are those of some step, ${at}`);
      assert.deepEqual(
        wanted.map((id) => read.get(id)),
        await Promise.all(wanted.map((id) => findOrder(store.db, id))),
        `each read as findOrder reads it, ${at}`,
      );
      assert.deepEqual(sorted(work.fund), selected(SOLVER_CONDITIONS.fund), `fund, ${at}`);
      assert.deepEqual(sorted(work.redeemForClient), selected(SOLVER_CONDITIONS.redeemForClient), `redeem for the client, ${at}`);
      assert.deepEqual(sorted(work.redeemSource), selected(SOLVER_CONDITIONS.redeemSource, (o) => o.destination.secret !== ''), `redeem the source, ${at}`);
      assert.deepEqual(sorted(work.accrue), selected(SOLVER_CONDITIONS.accrue), `accrue, ${at}`);
      assert.deepEqual(sorted(work.refund), selected(SOLVER_CONDITIONS.refund), `refund the destination, ${at}`);
      assert.deepEqual(sorted(work.refundSourceForClient), selected(SOLVER_CONDITIONS.refundSourceForClient), `refund the source for the client, ${at}`);
      assert.deepEqual(sorted(work.instantRefund), selected(SOLVER_CONDITIONS.instantRefund), `instant refund, ${at}`);
      // A backlog: each step gets its own oldest `limit`, whatever the other steps hold.
      const oldest = orders.slice().sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
      const firstOf = (condition: Condition, extra: (o: OrderRecord) => boolean = () => true) =>
        oldest.filter((o) => holds(condition, o, clock) && extra(o)).slice(0, 2).map((o) => o.id);
      const { steps: capped } = await solverWork(store.db, { ...solver, limit: 2, nowSeconds: now });
      assert.deepEqual(capped.fund, firstOf(SOLVER_CONDITIONS.fund), `fund, at most 2, ${at}`);
      assert.deepEqual(capped.redeemForClient, firstOf(SOLVER_CONDITIONS.redeemForClient), `redeem for the client, at most 2, ${at}`);
      assert.deepEqual(capped.redeemSource, firstOf(SOLVER_CONDITIONS.redeemSource, (o) => o.destination.secret !== ''), `redeem the source, at most 2, ${at}`);
      assert.deepEqual(capped.accrue, firstOf(SOLVER_CONDITIONS.accrue), `accrue, at most 2, ${at}`);
      assert.deepEqual(capped.refund, firstOf(SOLVER_CONDITIONS.refund), `refund the destination, at most 2, ${at}`);
      assert.deepEqual(capped.refundSourceForClient, firstOf(SOLVER_CONDITIONS.refundSourceForClient), `refund the source for the client, at most 2, ${at}`);
      assert.deepEqual(capped.instantRefund, firstOf(SOLVER_CONDITIONS.instantRefund), `instant refund, at most 2, ${at}`);
      // Whose steps: a pass of another solver takes the service's steps on these orders and none of
      // their solver's own; a pass without the service's steps (a `hashlock solver` process) the reverse.
      const other = await solverWork(store.db, { ...solver, solverId: 'another-solver', nowSeconds: now });
      const ownOnly = await solverWork(store.db, { ...solver, serviceSteps: false, nowSeconds: now });
      for (const step of SOLVER_STEPS) {
        const own = SOLVER_OWN_STEPS.has(step);
        assert.deepEqual(other.steps[step], own ? [] : work[step], `${step} in another solver's pass, ${at}`);
        assert.deepEqual(ownOnly.steps[step], own ? work[step] : [], `${step} in a pass without the service's steps, ${at}`);
      }
      // Only the orders asked about: an event-driven pass.
      const some = orders.filter((_, i) => i % 3 === 0).map((o) => o.id);
      const { steps: part } = await solverWork(store.db, { ...solver, nowSeconds: now, only: some });
      assert.deepEqual(sorted(part.fund), selected(SOLVER_CONDITIONS.fund, (o) => some.includes(o.id)), `fund among some orders, ${at}`);
    }
    assert.deepEqual(sorted(seen), sorted(ORDER_STATUSES), 'the states reach every status');
  });
});
