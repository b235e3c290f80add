// A chain's node out of reach while swaps need it, met by `hashlock serve` as an operator runs it: a
// loopback proxy between the service and each anvil cuts every connection and refuses new ones, then
// lets them through again. Clients reach the chains directly, and never act twice.
// - the source down when the clients' gasless initiates arrive: each is accepted, and carried out once
//   the node is back; every swap completes;
// - the destination down when the solver funds: every swap completes;
// - the destination down past rule 2's window: safety rule 2 no longer allows the funding, so it never
//   happens, and the client's refund goes through once the source timelock runs out; the solver, which
//   left confirmed sources unfunded past its time, is suspended from quoting until restored.
// Nothing is funded or redeemed twice, and no job fails because a node was away.
// The world runs short timelocks and a short rule-2 margin (the test registry's times and the service
// config's `solver_rule2_margin_seconds`), so that "past rule 2's window" is under a minute and a half,
// not minutes; each duration below says what it must outlast.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { TcpProxy } from '../helpers/tcp-proxy.ts';
import { loadTestRegistry, rule2WindowMs, timelocksInSeconds } from '../helpers/test-registry.ts';
import { solverPassesFrom, until } from '../helpers/wait.ts';
import { serviceForSuite, skipWithoutPostgres } from './service-process.ts';

const SWAPS = 5;
/** Rule 2's margin in this world: the service config's `solver_rule2_margin_seconds`. */
const RULE2_MARGIN_S = 25;
/**
 * Every chain's timelocks in this world: sources 180 s, destinations 90 s (at most half, as the
 * registry's rule-2 check requires of every pair of chains).
 */
const TIMES = timelocksInSeconds({ source: 180, destination: 90 });
/**
 * Rule 2's window of these swaps (ethereum_localnet WBTC -> arbitrum_localnet WBTC), from the
 * source's initiate, as the solver reckons it from this registry and margin: 180 - 90 - 25 = 65 s.
 */
const registry = loadTestRegistry(TIMES);
const WINDOW_MS = rule2WindowMs(registry.chain('ethereum_localnet')!, registry.chain('arbitrum_localnet')!, RULE2_MARGIN_S);
/**
 * The short outages (45 s, the source's and the destination's): past the engine's longest backoff
 * (src/engine/engine.ts: a job that cannot reach the node waits 5 s, doubling to 30 s; one that met
 * the outage at its start has waited 5 + 10 + 20 s and is in its longest, 30 s, wait after 35 s).
 */
const SHORT_OUTAGE_MS = Number(process.env.NODE_OUTAGE_SHORT_SECONDS ?? 45) * 1_000;
/**
 * The solver's time, within rule 2's window, to fund the destinations once their node is back after the
 * short outage: a solver pass (every second) and the funding's broadcast, with room for a loaded machine.
 */
const FUND_AFTER_OUTAGE_MS = 20_000;
/**
 * The outage past rule 2's window: the window and 20 s more, since the initiates reach the source
 * chain a few seconds after the cut and the solver counts the source's blocks, which may come late on
 * a loaded machine.
 */
const LONG_OUTAGE_MS = Number(process.env.NODE_OUTAGE_SECONDS ?? (WINDOW_MS + 20_000) / 1_000) * 1_000;
/**
 * The solver's time to fund a confirmed source (`solver_fund_within_seconds`): rule 2's window (past
 * it no funding may happen) and 10 s for the watcher to record one made at its very end. Longer than
 * the short outages' fundings take, shorter than the long outage: the solver is suspended then only.
 */
const FUND_WITHIN_SECONDS = WINDOW_MS / 1_000 + 10;
assert.ok(SHORT_OUTAGE_MS + FUND_AFTER_OUTAGE_MS <= WINDOW_MS, `a short outage of ${SHORT_OUTAGE_MS / 1000} s leaves too little of rule 2's ${WINDOW_MS / 1000} s window to fund after it`);
assert.ok(LONG_OUTAGE_MS > WINDOW_MS + 5_000, `NODE_OUTAGE_SECONDS=${LONG_OUTAGE_MS / 1000} is within rule 2's ${WINDOW_MS / 1000} s window: the funding would still be allowed`);

const skip = skipWithoutPostgres('the node outage tests');
const suite = serviceForSuite(
  {
    proxied: true,
    database: 'hashlock_outage',
    registryTimes: TIMES,
    config: { solver_rule2_margin_seconds: RULE2_MARGIN_S, solver_fund_within_seconds: FUND_WITHIN_SECONDS },
  },
  skip,
);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates the swaps (every node up), cuts `proxy` off, sends the clients' gasless initiates (their
 * answers' status codes go to `meanwhile`, run at the end of the outage), waits `ms`, then lets the
 * node be reached again.
 */
async function swapsWithNodeDown(proxy: TcpProxy, ms: number, meanwhile: (answers: number[], ids: string[]) => Promise<void> = async () => undefined) {
  const start = Date.now();
  const { created, destinationAmount } = await suite.world!.createSwaps(suite.service!, SWAPS);
  const ids = created.map((c) => c.order_id);
  proxy.cut();
  const cutAt = Date.now();
  let accepted: number;
  try {
    const answers = await suite.world!.initiate(suite.service!, created);
    accepted = Date.now();
    await pause(ms);
    await meanwhile(answers, ids);
  } finally {
    proxy.restore();
  }
  const timing = `swaps created in ${cutAt - start} ms, their initiates accepted ${accepted - cutAt} ms after the cut, the node back ${Date.now() - cutAt} ms after it`;
  return { ids, destinationAmount, timing };
}

const statuses = (ids: string[]) => suite.world!.statuses(suite.service!, ids);

test(`the source node down ${SHORT_OUTAGE_MS / 1000} s when the gasless initiates arrive: each is accepted and carried out once it is back`, { skip, timeout: SHORT_OUTAGE_MS + 300_000 }, async (t: TestContext) => {
  const w = suite.world!;
  const mark = await w.mark();
  const { ids, destinationAmount, timing } = await swapsWithNodeDown(w.proxies.eth!, SHORT_OUTAGE_MS, async (answers, orderIds) => {
    assert.deepEqual(answers, orderIds.map(() => 202), 'every initiate accepted while the node is away');
    assert.deepEqual(await statuses(orderIds), orderIds.map(() => 'created'), 'nothing could happen meanwhile');
  });
  t.diagnostic(timing);
  const back = Date.now();
  await w.waitCompleted(suite.service!, ids, 180_000);
  t.diagnostic(`every swap completed ${Date.now() - back} ms after the node was back, with no client acting again`);
  await w.assertSettledOnce(mark, SWAPS, destinationAmount);
  assert.deepEqual(await suite.service!.failedJobs(), []);
});

test(`the destination node down ${SHORT_OUTAGE_MS / 1000} s when the solver funds: every swap completes`, { skip, timeout: SHORT_OUTAGE_MS + 300_000 }, async (t: TestContext) => {
  const w = suite.world!;
  const mark = await w.mark();
  const { ids, destinationAmount, timing } = await swapsWithNodeDown(w.proxies.arb!, SHORT_OUTAGE_MS);
  t.diagnostic(timing);
  const back = Date.now();
  await w.waitCompleted(suite.service!, ids, 180_000);
  t.diagnostic(`every swap completed ${Date.now() - back} ms after the node was back`);
  await w.assertSettledOnce(mark, SWAPS, destinationAmount);
  assert.deepEqual(await suite.service!.failedJobs(), []);
});

test(`the destination node down ${LONG_OUTAGE_MS / 1000} s: rule 2 no longer allows the funding, it never happens, and the client's refund goes through`, { skip, timeout: LONG_OUTAGE_MS + 300_000 }, async (t: TestContext) => {
  const w = suite.world!;
  const s = suite.service!;
  assert.equal(rule2WindowMs(w.registry.chain('ethereum_localnet')!, w.registry.chain('arbitrum_localnet')!, RULE2_MARGIN_S), WINDOW_MS, "the service's registry is the one the window was reckoned from");
  const arbFrom = await w.arb.client.getBlockNumber();
  const { ids, timing } = await swapsWithNodeDown(w.proxies.arb!, LONG_OUTAGE_MS);
  t.diagnostic(timing);
  // The solver sees the destination again, past what rule 2 allows (the source's timelock less the
  // destination's and the margin): it says so for every order, and a pass later has still not funded.
  await until(
    'the solver to refuse every funding by rule 2',
    () => (ids.every((id) => s.output().split('\n').some((line) => line.includes(id) && /rule 2/.test(line))) ? true : undefined),
    60_000,
    250,
  );
  await solverPassesFrom(s.api);
  const now = await statuses(ids);
  assert.ok(now.every((st) => st === 'initiated'), `sources initiated, destinations never funded: ${now.join(', ')}`);
  const funded = await w.arb.client.getLogs({ address: w.arb.deployment.contracts.wbtcHtlc, fromBlock: arbFrom, toBlock: 'latest' });
  assert.equal(funded.length, 0, 'no destination HTLC event at all');
  // Confirmed sources left unfunded past their time: the solver is suspended (the service checks every
  // 10 s), and quotes leave it out.
  const record = await until(
    `the solver suspended with ${SWAPS} orders unfilled`,
    async () => {
      const r = (await s.request('GET', '/v2/liquidity')).body.result[0].record;
      return r.suspended === true && r.unfilled === SWAPS ? r : undefined;
    },
    60_000,
    500,
  ).catch(async (err: Error) => assert.fail(`${err.message}: ${JSON.stringify((await s.request('GET', '/v2/liquidity')).body.result[0].record)}`));
  assert.match(record.suspended_reason, /left the confirmed source of order [0-9a-f]{64} unfunded past its due time/);
  const quotePath = '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000';
  // Quotes read the suspensions through a cache of at most 2 s (src/solver/solver-standing.ts).
  const quote = await until('quotes to leave the suspended solver out', async () => {
    const q = await s.request('GET', quotePath);
    return q.status === 400 ? q : undefined;
  }, 10_000, 250).catch(async () => s.request('GET', quotePath));
  assert.deepEqual([quote.status, quote.body.code], [400, 'no_route'], JSON.stringify(quote.body));
  assert.match(s.output(), /solver suspended from quoting/);
  // The source timelock runs out (the test mines its blocks at once), and the client refunds.
  await w.refundAfterTimelock(s, ids, w.eth);
  t.diagnostic(`down ${LONG_OUTAGE_MS / 1000} s (rule 2's window: ${WINDOW_MS / 1000} s): every source refunded to the client; no destination was funded`);
  const failed = await s.failedJobs();
  assert.ok(
    failed.every((j) => /safety rule 2/.test(j.last_error)),
    `only fundings refused by rule 2 may have failed: ${JSON.stringify(failed)}`,
  );
});
