// A chain's node out of reach while swaps need it, met by `hashlock serve` as an operator runs it: a
// loopback proxy between the service and each anvil cuts every connection and refuses new ones, then
// lets them through again. Clients reach the chains directly, and never act twice.
// - the source down 3 minutes when the clients' gasless initiates arrive: each is accepted, and carried
//   out once the node is back; every swap completes;
// - the destination down 90 s when the solver funds: every swap completes;
// - the destination down 3 minutes: safety rule 2 no longer allows the funding, so it never happens,
//   and the client's refund goes through once the source timelock runs out; the solver, which left
//   confirmed sources unfunded past its time (150 s here), is suspended from quoting until restored.
// Nothing is funded or redeemed twice, and no job fails because a node was away.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { TcpProxy } from '../helpers/tcp-proxy.ts';
import { serviceForSuite, skipWithoutPostgres } from './service-process.ts';

const SWAPS = 5;
const LONG_OUTAGE_MS = Number(process.env.NODE_OUTAGE_SECONDS ?? 180) * 1_000;
const SHORT_OUTAGE_MS = 90_000;
// Past the 90 s outage, short of the long one with the pause after it.
const FUND_WITHIN_SECONDS = 150;
const skip = skipWithoutPostgres('the node outage tests');
const suite = serviceForSuite({ proxied: true, database: 'hashlock_outage', config: { solver_fund_within_seconds: FUND_WITHIN_SECONDS } }, skip);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates the swaps (every node up), cuts `proxy` off, sends the clients' gasless initiates (their
 * answers' status codes go to `meanwhile`, run at the end of the outage), waits `ms`, then lets the
 * node be reached again.
 */
async function swapsWithNodeDown(proxy: TcpProxy, ms: number, meanwhile: (answers: number[], ids: string[]) => Promise<void> = async () => undefined) {
  const { created, destinationAmount } = await suite.world!.createSwaps(suite.service!, SWAPS);
  const ids = created.map((c) => c.order_id);
  proxy.cut();
  try {
    const answers = await suite.world!.initiate(suite.service!, created);
    await pause(ms);
    await meanwhile(answers, ids);
  } finally {
    proxy.restore();
  }
  return { ids, destinationAmount };
}

const statuses = (ids: string[]) => suite.world!.statuses(suite.service!, ids);

test(`the source node down ${LONG_OUTAGE_MS / 1000} s when the gasless initiates arrive: each is accepted and carried out once it is back`, { skip, timeout: LONG_OUTAGE_MS + 300_000 }, async (t: TestContext) => {
  const w = suite.world!;
  const mark = await w.mark();
  const { ids, destinationAmount } = await swapsWithNodeDown(w.proxies.eth!, LONG_OUTAGE_MS, async (answers, orderIds) => {
    assert.deepEqual(answers, orderIds.map(() => 202), 'every initiate accepted while the node is away');
    assert.deepEqual(await statuses(orderIds), orderIds.map(() => 'created'), 'nothing could happen meanwhile');
  });
  const back = Date.now();
  await w.waitCompleted(suite.service!, ids, 180_000);
  t.diagnostic(`every swap completed ${Date.now() - back} ms after the node was back, with no client acting again`);
  await w.assertSettledOnce(mark, SWAPS, destinationAmount);
  assert.deepEqual(await suite.service!.failedJobs(), []);
});

test('the destination node down 90 s when the solver funds: every swap completes', { skip, timeout: SHORT_OUTAGE_MS + 300_000 }, async (t: TestContext) => {
  const w = suite.world!;
  const mark = await w.mark();
  const { ids, destinationAmount } = await swapsWithNodeDown(w.proxies.arb!, SHORT_OUTAGE_MS);
  const back = Date.now();
  await w.waitCompleted(suite.service!, ids, 180_000);
  t.diagnostic(`every swap completed ${Date.now() - back} ms after the node was back`);
  await w.assertSettledOnce(mark, SWAPS, destinationAmount);
  assert.deepEqual(await suite.service!.failedJobs(), []);
});

test(`the destination node down ${LONG_OUTAGE_MS / 1000} s: rule 2 no longer allows the funding, it never happens, and the client's refund goes through`, { skip, timeout: LONG_OUTAGE_MS + 300_000 }, async (t: TestContext) => {
  const w = suite.world!;
  const arbFrom = await w.arb.client.getBlockNumber();
  const { ids } = await swapsWithNodeDown(w.proxies.arb!, LONG_OUTAGE_MS);
  // The solver sees the destination again, past what rule 2 allows (the source's 600 blocks less the
  // destination's 150 and the 300 s margin): it does not fund.
  await pause(15_000);
  const now = await statuses(ids);
  assert.ok(now.every((s) => s === 'initiated'), `sources initiated, destinations never funded: ${now.join(', ')}`);
  const funded = await w.arb.client.getLogs({ address: w.arb.deployment.contracts.wbtcHtlc, fromBlock: arbFrom, toBlock: 'latest' });
  assert.equal(funded.length, 0, 'no destination HTLC event at all');
  // Confirmed sources left unfunded past their time: the solver is suspended, and quotes leave it out.
  const suspended = LONG_OUTAGE_MS / 1000 + 15 > FUND_WITHIN_SECONDS + 25;
  if (suspended) {
    const liquidity = await suite.service!.request('GET', '/v2/liquidity');
    const record = liquidity.body.result[0].record;
    assert.equal(record.suspended, true, JSON.stringify(record));
    assert.equal(record.unfilled, SWAPS);
    assert.match(record.suspended_reason, /left the confirmed source of order [0-9a-f]{64} unfunded past its due time/);
    const quote = await suite.service!.request('GET', '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000');
    assert.deepEqual([quote.status, quote.body.code], [400, 'no_route'], JSON.stringify(quote.body));
    assert.match(suite.service!.output(), /solver suspended from quoting/);
  } else t.diagnostic(`an outage of ${LONG_OUTAGE_MS / 1000} s is too short to suspend the solver (${FUND_WITHIN_SECONDS} s)`);
  // The source timelock runs out (the test mines its blocks at once), and the client refunds.
  await w.refundAfterTimelock(suite.service!, ids, w.eth);
  t.diagnostic('every source refunded to the client; no destination was funded');
  const failed = await suite.service!.failedJobs();
  assert.ok(
    failed.every((j) => /safety rule 2/.test(j.last_error)),
    `only fundings refused by rule 2 may have failed: ${JSON.stringify(failed)}`,
  );
});
