import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { STATUS_GROUP_NAMES, STATUS_GROUPS, statusGroup } from '../../src/orders/status-groups.ts';
import { ORDER_STATUSES, orderStatus, statusRank, type OrderStatus, type StatusClock } from '../../src/orders/status.ts';
import type { OrderRecord, SwapRecord } from '../../src/store/orders.ts';
import { memoOrderStatus } from '../../src/orders/order-json.ts';
import { mulberry32 } from '../helpers/seeded-random.ts';

const NOW = 1_800_000_000;

function swap(chain: string, fields: Partial<SwapRecord> = {}): SwapRecord {
  return {
    swapId: 'ab'.repeat(32),
    chain,
    asset: `${chain}:wbtc`,
    initiator: '0x1',
    redeemer: '0x2',
    delegate: '',
    timelock: '600',
    amount: '100000',
    filledAmount: '0',
    assetPrice: 1,
    secretHash: 'cd'.repeat(32),
    secret: '',
    instantRefundTx: '',
    initiateTxHash: '',
    redeemTxHash: '',
    refundTxHash: '',
    initiateBlockNumber: '0',
    redeemBlockNumber: '0',
    refundBlockNumber: '0',
    requiredConfirmations: 2,
    currentConfirmations: 0,
    initiateTimestamp: null,
    redeemTimestamp: null,
    refundTimestamp: null,
    createdAt: '2027-01-15 08:00:00+00',
    ...fields,
  };
}

function order(source: Partial<SwapRecord> = {}, destination: Partial<SwapRecord> = {}, deadline = NOW + 3600): OrderRecord {
  return {
    id: 'ef'.repeat(32),
    appId: 'app',
    nonce: '1',
    solverId: 'solver',
    integrator: 'test',
    version: 'v2',
    slippage: 0,
    secretHash: 'cd'.repeat(32),
    requestHash: '',
    deadline: String(deadline),
    createdAt: '2027-01-15 08:00:00+00',
    source: swap('ethereum_localnet', source),
    destination: swap('arbitrum_localnet', { timelock: '150', ...destination }),
    affiliateFees: [],
    quote: { sourceAmount: '1', destinationAmount: '1', sourcePrice: 1, destinationPrice: 1, feeBips: 0, fixedFee: '0', estimatedTime: 0 },
  };
}

const clock = (heights: Record<string, bigint> = {}, unixSeconds = NOW): StatusClock => ({
  unixSeconds,
  heights: new Map(Object.entries(heights)),
});

const initiated = { initiateTxHash: '0xi', initiateBlockNumber: '100', currentConfirmations: 2 };
const destInitiated = { initiateTxHash: '0xdi', initiateBlockNumber: '50', currentConfirmations: 1 };

const cases: Array<{ name: string; order: OrderRecord; now?: StatusClock; status: OrderStatus }> = [
  { name: 'nothing happened, deadline ahead', order: order(), status: 'created' },
  { name: 'deadline is the last valid second', order: order({}, {}, NOW), status: 'created' },
  { name: 'deadline passed without initiation', order: order({}, {}, NOW - 1), status: 'expired' },
  { name: 'source initiate seen', order: order({ initiateTxHash: '0xi' }), status: 'initiate_detected' },
  { name: 'source initiate seen after the deadline', order: order({ initiateTxHash: '0xi' }, {}, NOW - 1), status: 'initiate_detected' },
  { name: 'source in a block, too few confirmations', order: order({ ...initiated, currentConfirmations: 1 }), status: 'initiate_detected' },
  { name: 'source confirmed', order: order(initiated), status: 'initiated' },
  { name: 'source confirmed, timelock not yet run out', order: order(initiated), now: clock({ ethereum_localnet: 700n }), status: 'initiated' },
  { name: 'source timelock ran out', order: order(initiated), now: clock({ ethereum_localnet: 701n }), status: 'awaiting_refund' },
  { name: 'only the other chain is past the timelock', order: order(initiated), now: clock({ arbitrum_localnet: 10_000n }), status: 'initiated' },
  { name: 'destination initiate seen', order: order(initiated, { initiateTxHash: '0xdi' }), status: 'awaiting_redeem' },
  { name: 'destination initiated, source timelock ran out', order: order(initiated, destInitiated), now: clock({ ethereum_localnet: 10_000n }), status: 'awaiting_refund' },
  { name: 'destination refund seen, not confirmed', order: order(initiated, { ...destInitiated, refundTxHash: '0xdr' }), status: 'awaiting_redeem' },
  { name: 'destination refunded', order: order(initiated, { ...destInitiated, refundTxHash: '0xdr', refundBlockNumber: '300' }), status: 'awaiting_refund' },
  { name: 'destination redeem seen', order: order(initiated, { ...destInitiated, redeemTxHash: '0xdx' }), status: 'redeem_detected' },
  { name: 'source redeem seen before the destination redeem', order: order({ ...initiated, redeemTxHash: '0xsx' }, destInitiated), status: 'redeem_detected' },
  { name: 'destination redeemed, source timelock ran out', order: order(initiated, { ...destInitiated, redeemTxHash: '0xdx', redeemBlockNumber: '60' }), now: clock({ ethereum_localnet: 10_000n }), status: 'redeemed' },
  { name: 'destination redeemed', order: order(initiated, { ...destInitiated, redeemTxHash: '0xdx', redeemBlockNumber: '60' }), status: 'redeemed' },
  { name: 'source redeem seen, not confirmed', order: order({ ...initiated, redeemTxHash: '0xsx' }, { ...destInitiated, redeemTxHash: '0xdx', redeemBlockNumber: '60' }), status: 'redeemed' },
  { name: 'both redeemed', order: order({ ...initiated, redeemTxHash: '0xsx', redeemBlockNumber: '120' }, { ...destInitiated, redeemTxHash: '0xdx', redeemBlockNumber: '60' }), status: 'completed' },
  { name: 'source refund seen', order: order({ ...initiated, refundTxHash: '0xsr' }), now: clock({ ethereum_localnet: 800n }), status: 'refund_detected' },
  { name: 'source refunded', order: order({ ...initiated, refundTxHash: '0xsr', refundBlockNumber: '801' }), status: 'refunded' },
  { name: 'source refunded after the client was paid', order: order({ ...initiated, refundTxHash: '0xsr', refundBlockNumber: '801' }, { ...destInitiated, redeemTxHash: '0xdx', redeemBlockNumber: '60' }), status: 'refunded' },
];

describe('orderStatus', () => {
  for (const c of cases) {
    test(`${c.name} -> ${c.status}`, () => assert.equal(orderStatus(c.order, c.now ?? clock()), c.status));
  }

  test('the cases reach every status', () => {
    assert.deepEqual(new Set(cases.map((c) => c.status)), new Set(ORDER_STATUSES));
  });

  test('ORDER_STATUSES lists the statuses by rank', () => {
    assert.deepEqual(ORDER_STATUSES.map(statusRank), ORDER_STATUSES.map((_, i) => i));
  });

  test('every status belongs to exactly one status group', () => {
    for (const status of ORDER_STATUSES) {
      const groups = STATUS_GROUP_NAMES.filter((g) => (STATUS_GROUPS[g] as readonly string[]).includes(status));
      assert.deepEqual(groups, [statusGroup(status)], status);
    }
  });

  test('a reorg that removes a transaction moves the status back', () => {
    const paid = order(initiated, { ...destInitiated, redeemTxHash: '0xdx', redeemBlockNumber: '60' });
    assert.equal(orderStatus(paid, clock()), 'redeemed');
    paid.destination.redeemBlockNumber = '0';
    assert.equal(orderStatus(paid, clock()), 'redeem_detected');
    paid.destination.redeemTxHash = '';
    assert.equal(orderStatus(paid, clock()), 'awaiting_redeem');
    paid.destination.initiateTxHash = '';
    paid.destination.initiateBlockNumber = '0';
    assert.equal(orderStatus(paid, clock()), 'initiated');
    paid.source.currentConfirmations = 0;
    paid.source.initiateBlockNumber = '0';
    assert.equal(orderStatus(paid, clock()), 'initiate_detected');
  });

  test('a shorter chain after a reorg can take back awaiting_refund', () => {
    const o = order(initiated, destInitiated);
    assert.equal(orderStatus(o, clock({ ethereum_localnet: 701n })), 'awaiting_refund');
    assert.equal(orderStatus(o, clock({ ethereum_localnet: 699n })), 'awaiting_redeem');
  });
});

type Step = (o: OrderRecord, now: { unixSeconds: number; heights: Map<string, bigint> }) => string;

/** Fact additions, each monotone: a transaction seen, a block number set once, confirmations, heights and time growing. */
function steps(random: () => number): Step[] {
  const int = (n: number) => Math.floor(random() * n);
  const result: Step[] = [];
  for (const side of ['source', 'destination'] as const) {
    for (const tx of ['initiate', 'redeem', 'refund'] as const) {
      result.push((o) => {
        o[side][`${tx}TxHash`] = `0x${side}${tx}`;
        return `${side} ${tx} seen`;
      });
      result.push((o) => {
        if (o[side][`${tx}BlockNumber`] === '0') o[side][`${tx}BlockNumber`] = String(1 + int(1000));
        return `${side} ${tx} block`;
      });
    }
    result.push((o) => {
      o[side].currentConfirmations += 1 + int(2);
      return `${side} confirmations ${o[side].currentConfirmations}`;
    });
    result.push((o, now) => {
      const chain = o[side].chain;
      const height = (now.heights.get(chain) ?? BigInt(int(1000))) + BigInt(int(800));
      now.heights.set(chain, height);
      return `${chain} height ${height}`;
    });
  }
  result.push((_, now) => {
    now.unixSeconds += int(3000);
    return `time ${now.unixSeconds}`;
  });
  return result;
}

describe('orderStatus only moves forward as facts accumulate', () => {
  test('random fact sequences never lower the rank', () => {
    const reached = new Set<OrderStatus>();
    for (let seed = 1; seed <= 3000; seed++) {
      const random = mulberry32(seed);
      const o = order(
        { timelock: String(1 + Math.floor(random() * 600)), requiredConfirmations: Math.floor(random() * 4) },
        { timelock: String(1 + Math.floor(random() * 300)) },
        NOW + Math.floor(random() * 6000) - 3000,
      );
      const now = { unixSeconds: NOW, heights: new Map<string, bigint>() };
      const available = steps(random);
      const trail: string[] = [];
      let previous = orderStatus(o, now);
      reached.add(previous);
      for (let i = 0; i < 25; i++) {
        trail.push(available[Math.floor(random() * available.length)]!(o, now));
        const status = orderStatus(o, now);
        reached.add(status);
        assert.ok(
          statusRank(status) >= statusRank(previous),
          `seed ${seed}: ${previous} -> ${status} after ${trail.join(', ')}`,
        );
        previous = status;
      }
    }
    assert.deepEqual(new Set(ORDER_STATUSES), reached, 'the sequences reach every status');
  });
});

describe('the order read derives a record status once per status clock', () => {
  test('the same second and heights give the remembered status; a new second or a new heights read derive it again', () => {
    const o = order(initiated, {}, NOW + 10);
    const before = clock({ ethereum_localnet: 700n });
    assert.equal(memoOrderStatus(o, before), 'initiated');
    assert.equal(memoOrderStatus(o, { ...before }), 'initiated', 'the same clock in another object');
    // The next heights read (a new map) shows the source timelock run out.
    assert.equal(memoOrderStatus(o, clock({ ethereum_localnet: 701n })), 'awaiting_refund');
    // An order not initiated: only the second moves it past its deadline.
    const idle = order({}, {}, NOW);
    const heights = new Map<string, bigint>();
    assert.equal(memoOrderStatus(idle, { unixSeconds: NOW, heights }), 'created');
    assert.equal(memoOrderStatus(idle, { unixSeconds: NOW + 1, heights }), 'expired');
  });
});
