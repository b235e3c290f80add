// The node outages of node-outage.test.ts on the other families, and a slow node, met by `hashlock
// serve` as an operator runs it: a loopback proxy between the service and each node (two anvils, a
// Litecoin Core regtest node, the local Solana chain) cuts every connection and refuses new ones, or
// holds back every answer, then lets them through again. Clients reach the chains directly.
// - Litecoin, and Solana, down while the solver funds destinations there, while the solver's
//   own source redeem there is due (a client redeemed the EVM destination meanwhile), and while a
//   client asks for its redeem there: every swap completes once the node is back, each payment made once;
// - each down past what safety rule 2 allows for those fundings: none is ever made, neither those the
//   solver could not prepare meanwhile nor one signed just before the node went away (its job fails
//   by rule 2), and the clients' refunds go through once the source timelock runs out;
// - every node answering 5 s late for a while swaps need each of them: every swap completes.
// The Litecoin and the Solana tests of a kind run at once (each on its own EVM source chain, so that
// the source blocks one mines do not touch the other's swaps), to keep the file's time down. So do
// the world's short timelocks and short rule-2 margin (the test registry's times and the service
// config's `solver_rule2_margin_seconds`): "past rule 2's window" is under a minute and a half, not
// minutes. Each duration below says what it must outlast.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import type { Chain as RegistryChain } from '../../src/chains/registry.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import type { TcpProxy } from '../helpers/tcp-proxy.ts';
import { rule2WindowMs, timelocksInSeconds } from '../helpers/test-registry.ts';
import { solverPassesFrom, until } from '../helpers/wait.ts';
import { familiesMissing, type LitecoinSide, type SolanaSide } from './service-chains.ts';
import { serviceForSuite, skipWithoutPostgres, type Chain, type CreatedOrder, type ServiceWorld, type SwapRoute } from './service-process.ts';

const SWAPS = 3;
/** Swaps to each destination chain in each wave of the slow-node test. */
const PER_WAVE = 2;
/** Rule 2's margin in this world: the service config's `solver_rule2_margin_seconds`. */
const RULE2_MARGIN_S = 25;
/**
 * Every chain's timelocks in this world: sources 180 s, destinations 90 s (at most half, as the
 * registry's rule-2 check requires of every pair of chains), so that rule 2's window of a swap from an
 * EVM chain to Litecoin or Solana is 180 - 90 - 25 = 65 s (`rule2WindowMs`, from the world's registry).
 */
const TIMES = timelocksInSeconds({ source: 180, destination: 90 });
/**
 * The short outages (45 s): past the engine's longest backoff (src/engine/engine.ts: a job that cannot
 * reach the node waits 5 s, doubling to 30 s; one that met the outage at its start has waited
 * 5 + 10 + 20 s and is in its longest, 30 s, wait after 35 s).
 */
const SHORT_OUTAGE_MS = Number(process.env.NODE_OUTAGE_SHORT_SECONDS ?? 45) * 1_000;
/**
 * The solver's time, within rule 2's window, to fund the destinations once their node is back after a
 * short outage: a solver pass (every second), the funding built (Litecoin's fee rate, Solana's blockhash)
 * and sent, with room for a loaded machine.
 */
const FUND_AFTER_OUTAGE_MS = 20_000;
const SLOW_MS = Number(process.env.NODE_SLOW_MS ?? 5_000);
/**
 * How long every node answers `SLOW_MS` late (45 s): long enough that the first wave's fundings and the
 * second wave's initiates are all signed while it lasts, each after a few of the slow reads it needs
 * (the source's and the destination's state, fees, a nonce, a blockhash: 5 s each; the second wave's
 * initiates are asked for once the first wave's sources are initiated). On this machine, under other
 * tests' load, the fundings were signed 10-26 s in, the initiates 16-27 s in.
 */
const SLOW_FOR_MS = Number(process.env.NODE_SLOW_SECONDS ?? 45) * 1_000;
/**
 * How long past the rule-2 window an outage lasts: the initiates reach the source chain a few seconds
 * after the cut, and the solver counts the source's blocks, which may come late on a loaded machine.
 */
const RULE2_CUSHION_MS = 20_000;
const SOL_FEE = 5_000n;

const missing = skipWithoutPostgres('the Litecoin and Solana node outage tests') || (await familiesMissing());
if (missing && !/DATABASE_URL/.test(missing)) console.warn(`\n*** SKIPPING the Litecoin and Solana node outage tests: ${missing} ***\n`);
const skip = missing ?? false;
// `solver_fund_within_seconds` stays at its 300 s: the fundings refused by rule 2 fall due only after
// the slow-node test, the last, has made its orders (quotes would leave a suspended solver out).
const suite = serviceForSuite(
  { proxied: true, litecoin: true, solana: true, database: 'hashlock_outage_families', registryTimes: TIMES, config: { solver_rule2_margin_seconds: RULE2_MARGIN_S } },
  skip,
);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const evmUser = devAccount('user').address;

/** A secret the client keeps, with its hash for the order. */
function clientSecret() {
  const secret = randomBytes(32);
  return { secret: secret.toString('hex'), secretHash: createHash('sha256').update(secret).digest('hex') };
}

interface Order {
  order_id: string;
  status: string;
  source_swap: { chain: string; swap_id: string; amount: string; initiate_tx_hash: string; redeem_tx_hash: string; initiate_block_number: string };
  destination_swap: { chain: string; swap_id: string; amount: string; initiate_tx_hash: string; redeem_tx_hash: string; initiate_block_number: string };
}
const read = (id: string) => suite.service!.call(`/v2/orders/${id}`) as Promise<Order>;

/** Polls an order until `done` holds; fails naming `what` after `timeoutMs`. */
async function orderUntil(id: string, done: (o: Order) => boolean, what: string, timeoutMs = 90_000): Promise<Order> {
  for (const end = Date.now() + timeoutMs; ; await pause(500)) {
    const order = await read(id);
    if (done(order)) return order;
    assert.ok(Date.now() < end, `order ${id} never reached ${what}: ${JSON.stringify(order)}`);
  }
}

/**
 * One non-EVM chain of the world as these tests use it: its proxy, its EVM partner chains (the source
 * of swaps to it, the destination of swaps from it), how the client initiates a source there, and
 * what the chain itself says of each HTLC.
 */
interface Family {
  name: string;
  asset: string;
  proxy: TcpProxy;
  chain: RegistryChain;
  /** The EVM chain that swaps to this family start from, and the one that swaps from it go to. */
  evmSource: Chain;
  evmDestination: Chain;
  /** The user's address here, and the amount of a swap from here. */
  owner: string;
  sourceAmount: bigint;
  /** The client initiates an order's source here (from its create answer). */
  fundSource(created: CreatedOrder): Promise<void>;
  /** Where the chain is now, for `assertOnce`. */
  mark(): Promise<number>;
  /**
   * Each destination here was funded once and redeemed once to the user, each source here was funded
   * once and redeemed once to the solver, according to the chain since `mark`.
   */
  assertOnce(mark: number, orders: { destinations: Order[]; sources: Order[] }): Promise<void>;
  /** No destination of `orders` was funded here since `mark`. */
  assertNeverFunded(mark: number, orders: Order[]): Promise<void>;
}

/**
 * What a family is named by in the world: its chain (its native asset is the one swapped), the proxy
 * before its node, and its EVM partners, the source of swaps to it and the destination of swaps from it.
 */
function partners(side: { chain: RegistryChain }, proxy: TcpProxy | undefined, [evmSource, evmDestination]: [Chain, Chain]) {
  return { name: side.chain.name, asset: side.chain.nativeAssetId, chain: side.chain, proxy: proxy!, evmSource, evmDestination };
}

/** JSON with bigints as strings, for messages. */
const json = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

function litecoinFamily(w: ServiceWorld, ltc: LitecoinSide): Family {
  const sourceAmount = 100_000_000n;
  const once = async (mark: number, orders: Order[], side: 'source_swap' | 'destination_swap', paidTo: string) => {
    const activity = await ltc.activity(orders.map((o) => o[side].swap_id), mark);
    for (const o of orders) {
      const { payments, spends } = activity.get(o[side].swap_id)!;
      assert.deepEqual(payments.map((p) => p.value), [BigInt(o[side].amount)], `${o.order_id}: one payment of the amount to its ${side} HTLC: ${json(payments)}`);
      assert.equal(payments[0]!.txid, o[side].initiate_tx_hash);
      assert.deepEqual(spends.map((s) => s.txid), [o[side].redeem_tx_hash], `${o.order_id}: one spend of its ${side} HTLC, the redeem`);
      const out = spends[0]!.outputs;
      assert.ok(out.length === 1 && out[0]!.address === paidTo && out[0]!.value > BigInt(o[side].amount) - 100_000n, `${o.order_id}: the redeem pays ${paidTo} the amount less a fee: ${json(out)}`);
    }
  };
  return {
    ...partners(ltc, w.proxies.ltc, [w.eth, w.arb]),
    owner: ltc.user,
    sourceAmount,
    fundSource: async (created) => void (await ltc.pay(created.to!, sourceAmount)),
    mark: () => ltc.height(),
    assertOnce: async (mark, orders) => {
      await once(mark, orders.destinations, 'destination_swap', ltc.user);
      await once(mark, orders.sources, 'source_swap', ltc.solverWallet);
    },
    assertNeverFunded: async (mark, orders) => {
      const activity = await ltc.activity(orders.map((o) => o.destination_swap.swap_id), mark);
      for (const o of orders) assert.deepEqual(activity.get(o.destination_swap.swap_id)!.payments, [], `${o.order_id}: nothing paid to its destination HTLC`);
    },
  };
}

function solanaFamily(w: ServiceWorld, sol: SolanaSide): Family {
  let userLamports = 0n;
  const once = async (orders: Order[], side: 'source_swap' | 'destination_swap') => {
    for (const o of orders) {
      const txs = await sol.swapTransactions(o[side].swap_id);
      assert.deepEqual(txs.filter((t) => t.failed), [], `${o.order_id}: no transaction failed on its ${side} account`);
      assert.deepEqual(txs.map((t) => t.signature).sort(), [o[side].initiate_tx_hash, o[side].redeem_tx_hash].sort(), `${o.order_id}: its ${side} account was initiated once and redeemed once`);
    }
  };
  return {
    ...partners(sol, w.proxies.sol, [w.arb, w.eth]),
    owner: sol.user.address,
    sourceAmount: 1_000_000_000n,
    fundSource: async (created) => void (await sol.send(created.versioned_tx!)),
    mark: async () => {
      userLamports = await sol.userLamports();
      return 0;
    },
    assertOnce: async (_mark, orders) => {
      await once(orders.destinations, 'destination_swap');
      await once(orders.sources, 'source_swap');
      // The user received each destination amount once and paid each source amount once, with the
      // one signature of its own initiate; the rest (rent, redeems) is paid back or paid by others.
      const received = orders.destinations.reduce((sum, o) => sum + BigInt(o.destination_swap.amount), 0n);
      const paid = orders.sources.reduce((sum, o) => sum + BigInt(o.source_swap.amount) + SOL_FEE, 0n);
      assert.equal(await sol.userLamports(), userLamports + received - paid, 'the user got each SOL destination once and paid each SOL source once');
    },
    assertNeverFunded: async (_mark, orders) => {
      for (const o of orders) assert.deepEqual(await sol.swapTransactions(o.destination_swap.swap_id), [], `${o.order_id}: its destination account was never touched`);
    },
  };
}

const families = () => ({ ltc: litecoinFamily(suite.world!, suite.world!.ltc!), sol: solanaFamily(suite.world!, suite.world!.sol!) });

/** Swaps from the family's EVM source chain to it (the user's WBTC; the secret the service's unless given). */
const toFamily = (f: Family, secretHash?: string): SwapRoute => ({
  from: `${f.evmSource.deployment.chain}:wbtc`,
  to: f.asset,
  fromOwner: evmUser,
  toOwner: f.owner,
  amount: 100_000n,
  ...(secretHash ? { secretHash } : {}),
});
const fromFamily = (f: Family, secretHash: string): SwapRoute => ({
  from: f.asset,
  to: `${f.evmDestination.deployment.chain}:wbtc`,
  fromOwner: f.owner,
  toOwner: evmUser,
  amount: f.sourceAmount,
  secretHash,
});

/** Each order of `orders` has exactly these WBTC HTLC events on `c` since `fromBlock`. */
async function assertEvmEvents(c: Chain, fromBlock: bigint, orders: Order[], side: 'source_swap' | 'destination_swap', expected: string[]) {
  const events = await suite.world!.htlcEvents(c, fromBlock);
  for (const o of orders) assert.deepEqual(events.get(o[side].swap_id) ?? [], expected, `${o.order_id}: its ${c.deployment.chain} HTLC events`);
}

const blockOf = async (c: Chain) => (await c.client.getBlockNumber()) + 1n;

/** The jobs of these orders that failed, with why (an earlier test's rule-2 refusals are not theirs). */
const failedOf = async (ids: string[]) =>
  (await suite.service!.jobs()).filter((j) => j.status === 'failed' && ids.includes(j.order_id ?? '')).map((j) => `${j.idempotency_key}: ${j.last_error}`);

/**
 * The family's node down `SHORT_OUTAGE_MS` while it is needed three ways: the solver's fundings of
 * `SWAPS` swaps whose gasless initiates arrive during the outage; the solver's redeem of a source
 * there, due once the client redeemed its EVM destination during the outage; and a client's redeem
 * of its destination there, asked during the outage (answered 503, nothing done) and again after.
 */
async function shortOutage(t: TestContext, f: Family) {
  const w = suite.world!;
  const s = suite.service!;
  // The client's redeem there comes after the outage: within the destination timelock, or it would
  // race the solver's refund of its expired HTLC (as it would for any client that late).
  const timelockMs = f.chain.destinationTimelock * f.chain.blockTimeMs;
  assert.ok(SHORT_OUTAGE_MS + 20_000 < timelockMs, `NODE_OUTAGE_SHORT_SECONDS must leave 20 s of ${f.name}'s ${timelockMs / 1000} s destination timelock`);
  // And the solver's fundings there after it, within rule 2's window.
  const windowMs = rule2WindowMs(w.registry.chain(f.evmSource.deployment.chain)!, f.chain, RULE2_MARGIN_S);
  assert.ok(SHORT_OUTAGE_MS + FUND_AFTER_OUTAGE_MS <= windowMs, `NODE_OUTAGE_SHORT_SECONDS must leave ${FUND_AFTER_OUTAGE_MS / 1000} s of rule 2's ${windowMs / 1000} s window for ${f.name}`);
  const from = { family: await f.mark(), evmSource: await blockOf(f.evmSource), evmDestination: await blockOf(f.evmDestination) };
  const fundings = await w.createSwaps(s, SWAPS, toFamily(f));
  const sourceSecret = clientSecret();
  const [sourceSwap] = (await w.createSwaps(s, 1, fromFamily(f, sourceSecret.secretHash))).created;
  const destinationSecret = clientSecret();
  const [destinationSwap] = (await w.createSwaps(s, 1, toFamily(f, destinationSecret.secretHash))).created;
  // Before the outage: the source here funded and its EVM destination funded by the solver; the
  // EVM source of the other initiated and its destination here funded, in a block.
  await f.fundSource(sourceSwap!);
  await w.initiate(s, [destinationSwap!]);
  await Promise.all([
    orderUntil(sourceSwap!.order_id, (o) => o.status === 'awaiting_redeem', 'its EVM destination funded'),
    orderUntil(destinationSwap!.order_id, (o) => o.destination_swap.initiate_block_number !== '0', `its ${f.name} destination mined`),
  ]);

  f.proxy.cut();
  const cutAt = Date.now();
  let back: number;
  try {
    assert.deepEqual(await w.initiate(s, fundings.created), fundings.created.map(() => 202), 'every gasless initiate accepted');
    const redeemEvm = await s.request('PATCH', `/v2/orders/${sourceSwap!.order_id}?action=redeem`, { secret: sourceSecret.secret });
    assert.equal(redeemEvm.status, 202, `the client's EVM redeem: ${JSON.stringify(redeemEvm.body)}`);
    const early = await s.request('PATCH', `/v2/orders/${destinationSwap!.order_id}?action=redeem`, { secret: destinationSecret.secret });
    assert.equal(early.status, 503, `a redeem on ${f.name} while its node is away: ${JSON.stringify(early.body)}`);
    assert.equal(early.body.code, 'chain_unavailable');
    await pause(Math.max(0, cutAt + SHORT_OUTAGE_MS - Date.now()));
    // Nothing needing the node happened meanwhile: the destinations are unfunded, the source unredeemed.
    const ids = fundings.created.map((c) => c.order_id);
    assert.deepEqual(await w.statuses(s, ids), ids.map(() => 'initiated'), 'sources initiated, destinations not funded');
    const meanwhile = await read(sourceSwap!.order_id);
    assert.equal(meanwhile.status, 'redeemed', 'the EVM destination redeemed by the client, the source not yet');
    assert.equal(meanwhile.source_swap.redeem_tx_hash, '');
    assert.equal((await read(destinationSwap!.order_id)).destination_swap.redeem_tx_hash, '');
  } finally {
    f.proxy.restore();
    back = Date.now();
  }
  const again = await s.request('PATCH', `/v2/orders/${destinationSwap!.order_id}?action=redeem`, { secret: destinationSecret.secret });
  assert.equal(again.status, 202, `the same redeem once the node is back: ${JSON.stringify(again.body)}`);
  const ids = [...fundings.created, sourceSwap!, destinationSwap!].map((c) => c.order_id);
  await w.waitCompleted(s, ids, 180_000);
  t.diagnostic(`${f.name} down ${SHORT_OUTAGE_MS / 1000} s: every swap completed ${Date.now() - back} ms after the node was back`);

  const orders = await Promise.all(ids.map(read));
  const destinations = orders.filter((o) => o.order_id !== sourceSwap!.order_id);
  const sources = orders.filter((o) => o.order_id === sourceSwap!.order_id);
  await f.assertOnce(from.family, { destinations, sources });
  await assertEvmEvents(f.evmSource, from.evmSource, destinations, 'source_swap', ['Initiated', 'Redeemed']);
  await assertEvmEvents(f.evmDestination, from.evmDestination, sources, 'destination_swap', ['Initiated', 'Redeemed']);
  assert.deepEqual(await failedOf(ids), [], 'no job failed');
}

function pastRule2Ms(f: Family): number {
  const windowMs = rule2WindowMs(suite.world!.registry.chain(f.evmSource.deployment.chain)!, f.chain, RULE2_MARGIN_S);
  const set = process.env.NODE_OUTAGE_PAST_RULE2_SECONDS;
  if (set === undefined) return windowMs + RULE2_CUSHION_MS;
  const ms = Number(set) * 1_000;
  assert.ok(ms > windowMs + 5_000, `NODE_OUTAGE_PAST_RULE2_SECONDS=${set} is within rule 2's ${windowMs / 1000} s window for ${f.name}: the funding would still be allowed`);
  return ms;
}

/** A destination funding job of the solver: `fund` on the Bitcoin family, `solver-fund` elsewhere. */
const FUNDING = /^(solver-)?fund$/;

/**
 * The family's node down past what rule 2 allows for the fundings of two kinds of swaps: `SWAPS`
 * whose gasless initiates arrive during the outage (the solver cannot prepare their fundings without
 * the node: Litecoin's fee rate, Solana's swap account),
 * and one whose funding was signed and written, its sending held back by the slow node, when the
 * node went away (the engine never sends it after its deadline, and the job fails by rule 2). None
 * is ever funded, and the clients refund their EVM sources.
 */
async function outagePastRule2(t: TestContext, f: Family) {
  const w = suite.world!;
  const s = suite.service!;
  const outageMs = pastRule2Ms(f);
  const mark = await f.mark();
  const evmFrom = await blockOf(f.evmSource);
  const { created } = await w.createSwaps(s, SWAPS, toFamily(f));
  const [held] = (await w.createSwaps(s, 1, toFamily(f))).created;
  const ids = [...created, held!].map((c) => c.order_id);
  // Every request reaches the node 5 s late: the held swap's funding is signed and stored, and the
  // node is gone before its sending gets there.
  f.proxy.slow(5_000, 'requests');
  try {
    await w.initiate(s, [held!]);
    const job = await until(
      'the held funding signed',
      async () => (await s.jobs()).find((j) => j.order_id === held!.order_id && FUNDING.test(j.action) && j.signed_at !== null),
      60_000,
      50,
    );
    f.proxy.cut();
    const cutAt = Date.now();
    t.diagnostic(`${held!.order_id}'s funding ${job.idempotency_key} signed, its sending held back when the node went away`);
    f.proxy.fast();
    assert.deepEqual(await w.initiate(s, created), created.map(() => 202));
    await pause(Math.max(0, cutAt + outageMs - Date.now()));
  } finally {
    f.proxy.fast();
    f.proxy.restore();
  }
  const restoredAt = Date.now();
  // The solver and the engine see the destination chain again, past what rule 2 allows: nothing is
  // sent. The solver says so for each funding it could not prepare, and a pass later none is funded.
  const refused = (id: string) => s.output().split('\n').some((line) => line.includes(id) && /rule 2/.test(line));
  await until('the solver to refuse those fundings by rule 2', () => (created.every((c) => refused(c.order_id)) ? true : undefined), 60_000, 250);
  await solverPassesFrom(s.api);
  const now = await Promise.all(ids.map(read));
  assert.deepEqual(now.map((o) => o.status), ids.map(() => 'initiated'), 'sources initiated, destinations never funded');
  await f.assertNeverFunded(mark, now);
  const refusals = s.output().split('\n').filter((line) => /rule 2/.test(line));
  for (const c of created) assert.ok(refusals.some((line) => line.includes(c.order_id)), `the solver said rule 2 refused ${c.order_id}'s funding`);
  // The engine looks at the held funding again within its longest wait (30 s) once the node is back.
  const heldFailed = await until(
    'the held funding to fail',
    async () => (await s.jobs()).find((j) => j.order_id === held!.order_id && FUNDING.test(j.action) && j.status === 'failed'),
    90_000,
    500,
  );
  assert.match(heldFailed.last_error, /safety rule 2/);
  assert.deepEqual(await failedOf(ids), [`${heldFailed.idempotency_key}: ${heldFailed.last_error}`], 'the held funding failed, and nothing else of these swaps');
  await w.refundAfterTimelock(s, ids, f.evmSource);
  t.diagnostic(`${f.name} down ${outageMs / 1000} s (rule 2's window: ${rule2WindowMs(w.registry.chain(f.evmSource.deployment.chain)!, f.chain, RULE2_MARGIN_S) / 1000} s): never funded, every source refunded to the client; the held funding failed ${heldFailed.updated_at.getTime() - restoredAt} ms after the node was back: ${heldFailed.last_error}`);
  await assertEvmEvents(f.evmSource, evmFrom, now, 'source_swap', ['Initiated', 'Refunded']);
  await f.assertNeverFunded(mark, now);
  assert.deepEqual(await failedOf(ids), [`${heldFailed.idempotency_key}: ${heldFailed.last_error}`], 'the refunds failed nothing');
}

describe(`a Litecoin or Solana node down ${SHORT_OUTAGE_MS / 1000} s while it is needed`, { concurrency: true }, () => {
  test(`Litecoin down ${SHORT_OUTAGE_MS / 1000} s when the solver funds on it, redeems its source on it, and a client asks for its redeem there: every swap completes, each payment once`, { skip, timeout: SHORT_OUTAGE_MS + 360_000 }, (t) => shortOutage(t, families().ltc));
  test(`Solana down ${SHORT_OUTAGE_MS / 1000} s when the solver funds on it, redeems its source on it, and a client asks for its redeem there: every swap completes, each payment once`, { skip, timeout: SHORT_OUTAGE_MS + 360_000 }, (t) => shortOutage(t, families().sol));
});

describe('a Litecoin or Solana node down past what safety rule 2 allows for the fundings', { concurrency: true }, () => {
  test('Litecoin down past rule 2: no destination is ever funded (one signed funding is never sent, its job fails by rule 2), and the clients refund', { skip, timeout: 900_000 }, (t) => outagePastRule2(t, families().ltc));
  test('Solana down past rule 2: no destination is ever funded (one signed funding is never sent, its job fails by rule 2), and the clients refund', { skip, timeout: 900_000 }, (t) => outagePastRule2(t, families().sol));
});

/**
 * Every node answers `SLOW_MS` late for `SLOW_FOR_MS`, with swaps from ethereum_localnet to each
 * other family: a first wave's sources initiated just before (their fundings go out through the slow
 * destination nodes, which are slow already), a second wave's gasless initiates arriving once every
 * node is slow (relayed through the slow source node).
 */
test(`every node answering ${SLOW_MS / 1000} s late for ${SLOW_FOR_MS / 1000} s while swaps need each of them: every swap completes, nothing twice, no job failed`, { skip, timeout: SLOW_FOR_MS + 360_000 }, async (t) => {
  const w = suite.world!;
  const s = suite.service!;
  const { ltc, sol } = families();
  const from = { eth: await blockOf(w.eth), arb: await blockOf(w.arb), ltc: await ltc.mark(), sol: await sol.mark() };
  const routes = { arb: undefined, ltc: toFamily(ltc), sol: { ...toFamily(sol), from: 'ethereum_localnet:wbtc' } };
  const wave = async () => {
    const made = await Promise.all(Object.values(routes).map((route) => w.createSwaps(s, PER_WAVE, route)));
    return made.flatMap((m) => m.created);
  };
  const [first, second] = [await wave(), await wave()];
  const destinations = [w.proxies.arb!, w.proxies.ltc!, w.proxies.sol!];
  for (const p of destinations) p.slow(SLOW_MS);
  const slowAt = Date.now();
  let fastAt: number;
  let atEnd: string[];
  try {
    assert.deepEqual(await w.initiate(s, first), first.map(() => 202));
    await w.waitStatus(s, first.map((c) => c.order_id), 'initiated', 30_000);
    w.proxies.eth!.slow(SLOW_MS);
    assert.deepEqual(await w.initiate(s, second), second.map(() => 202));
    await pause(Math.max(0, slowAt + SLOW_FOR_MS - Date.now()));
    atEnd = await w.statuses(s, [...first, ...second].map((c) => c.order_id));
  } finally {
    for (const p of Object.values(w.proxies)) p.fast();
    fastAt = Date.now();
  }
  const ids = [...first, ...second].map((c) => c.order_id);
  await w.waitCompleted(s, ids, 180_000);
  const count = (list: string[]) => JSON.stringify(Object.fromEntries([...new Set(list)].map((x) => [x, list.filter((y) => y === x).length])));
  t.diagnostic(`after ${SLOW_FOR_MS / 1000} s of slow nodes: ${count(atEnd)}; every swap completed ${Date.now() - fastAt} ms after they were fast again`);

  // What went through the slow nodes: the first wave's fundings on each destination chain, the
  // second wave's initiates on the source chain, each signed (its node's state read) while slow.
  const jobs = await s.jobs();
  const signedWhileSlow = (orders: CreatedOrder[], action: RegExp) =>
    orders.map((c) => {
      const job = jobs.find((j) => j.order_id === c.order_id && action.test(j.action));
      return job?.signed_at ? (job.signed_at.getTime() < fastAt ? `${job.chain} ${Math.round((job.signed_at.getTime() - slowAt) / 1000)} s` : 'after') : 'never';
    });
  const fundings = signedWhileSlow(first, /^(solver-)?fund$/);
  const initiates = signedWhileSlow(second, /^initiate$/);
  t.diagnostic(`first wave's fundings signed while slow, at: ${fundings.join(', ')}; second wave's initiates: ${initiates.join(', ')}`);
  assert.ok(fundings.every((f) => / s$/.test(f)) && initiates.every((f) => / s$/.test(f)), 'every such transaction went out through a slow node');

  const orders = await Promise.all(ids.map(read));
  const to = (chain: string) => orders.filter((o) => o.destination_swap.chain === chain);
  await assertEvmEvents(w.eth, from.eth, orders, 'source_swap', ['Initiated', 'Redeemed']);
  await assertEvmEvents(w.arb, from.arb, to('arbitrum_localnet'), 'destination_swap', ['Initiated', 'Redeemed']);
  await ltc.assertOnce(from.ltc, { destinations: to('litecoin_localnet'), sources: [] });
  await sol.assertOnce(from.sol, { destinations: to('solana_localnet'), sources: [] });
  assert.deepEqual(await failedOf(ids), [], 'no job failed');
});
