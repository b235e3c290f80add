import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { OrderRecorder } from '../../src/events/order-recorder.ts';
import { setSolverSuspended } from '../../src/store/solver-records.ts';
import { registerSolver, revokeSolver, solverAddressMessage } from '../../src/store/solver-registry.ts';
import { availableLiquidity, setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { SOLVER, USER } from '../helpers/fixtures.ts';
import { QuotingSolver, type Pricer } from '../helpers/quote-solver.ts';
import { SseClient } from '../helpers/sse.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;

const FROM = 'ethereum_localnet:wbtc';
const TO = 'arbitrum_localnet:wbtc';
const DEADLINE_MS = 300;
/** The in-process solver's price for 100,000 sats: 30 bips off. */
const IN_PROCESS = 99_700n;

describeEachStore('solver API: quote requests, competing answers, matched orders', (kind) => {
  let t: TestApi;
  let base: string;
  let nonce = 0;
  const makers: Record<string, { key: string; account: PrivateKeyAccount }> = {};
  const open: QuotingSolver[] = [];

  before(async () => {
    t = await openTestApi(kind, undefined, { solverQuoteDeadlineMs: DEADLINE_MS, solverStandingMs: 0 });
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
    for (const id of ['maker-1', 'maker-2']) {
      const account = privateKeyToAccount(generatePrivateKey());
      makers[id] = { key: (await registerSolver(t.store.db, { id, name: id })).key, account };
      for (const chain of ['ethereum_localnet', 'arbitrum_localnet']) {
        const proof = { address: account.address, signature: await account.signMessage({ message: solverAddressMessage(id, chain, account.address) }) };
        assert.equal((await solverCall(id, 'PUT', `/solver/v1/addresses/${chain}`, proof)).status, 200);
      }
      await setSolverBalance(t.store.db, { solverId: id, asset: TO, balance: 50_000_000n });
    }
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: TO, balance: 50_000_000n });
  });
  after(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  const solverCall = async (id: string, method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) => {
    const res = await t.api.inject({ method, url, headers: { 'solver-key': makers[id]!.key }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  const appCall = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.api.inject({ method, url, headers: { 'service-app-id': t.key }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  const connect = async (id: string, price: Pricer) => {
    const solver = await QuotingSolver.connect(base, makers[id]!.key, price);
    open.push(solver);
    return solver;
  };
  /** Offers `destination` for any source amount (scaled from 100,000 sats). */
  const offering = (destination: bigint, delayMs = 0): Pricer => (r) => ({ amount: (destination * BigInt(r.source_amount ?? '100000')) / 100_000n, delayMs });
  const quote = () => appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=100000`);
  /** Answers stand until their expiry, so a test that wants fresh answers orders an amount nobody quoted yet. */
  const order = (destination: bigint, extra: object = {}, source = 100_000n) =>
    appCall('POST', '/v2/orders', {
      source: { asset: FROM, owner: USER, amount: source.toString() },
      destination: { asset: TO, owner: USER, amount: destination.toString() },
      nonce: `q-${++nonce}`,
      ...extra,
    });

  test('pairs: only with proven addresses on both chains and active assets; no stream without pairs', async () => {
    const noPairs = await SseClient.open(`${base}/solver/v1/quote-requests`, { 'solver-key': makers['maker-1']!.key });
    assert.equal(noPairs.response.statusCode, 409);
    assert.match(await noPairs.text(), /no pairs registered: register the pairs you serve first/);
    const cases: Array<[object, RegExp]> = [
      [{ source_asset: 'litecoin_localnet:ltc', destination_asset: TO }, /^pairs\[0\]\.source_asset: prove your address on litecoin_localnet first/],
      [{ source_asset: FROM, destination_asset: 'nowhere:x' }, /^pairs\[0\]\.destination_asset: unknown or inactive asset nowhere:x/],
      [{ source_asset: FROM, destination_asset: FROM }, /^pairs\[0\]\.destination_asset: must differ from source_asset/],
    ];
    for (const [pair, error] of cases) {
      const res = await solverCall('maker-1', 'PUT', '/solver/v1/pairs', { pairs: [pair] });
      assert.deepEqual([res.status, res.body.code], [400, 'invalid_request'], JSON.stringify(pair));
      assert.match(res.body.error, error);
    }
    for (const id of ['maker-1', 'maker-2']) {
      const res = await solverCall(id, 'PUT', '/solver/v1/pairs', { pairs: [{ source_asset: FROM, destination_asset: TO }] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.result.pairs, [{ source_asset: FROM, destination_asset: TO }]);
    }
    assert.deepEqual((await solverCall('maker-1', 'GET', '/solver/v1/me')).body.result.pairs, [{ source_asset: FROM, destination_asset: TO }]);
  });

  test('GET /v2/quote: both registered solvers and the in-process one compete, best first; a late answer is refused and left out', async () => {
    const one = await connect('maker-1', offering(99_900n));
    const two = await connect('maker-2', offering(99_800n));
    const both = await quote();
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.deepEqual(
      both.body.result.map((q: Json) => [q.solver_id, q.destination.amount]),
      [
        ['maker-1', '99900'],
        ['maker-2', '99800'],
        [SOLVER.id, IN_PROCESS.toString()],
      ],
    );
    const asked = one.requests.at(-1)!;
    assert.deepEqual(
      [asked.purpose, asked.source_asset, asked.destination_asset, asked.source_amount, asked.destination_amount],
      ['quote', FROM, TO, '100000', null],
    );
    assert.equal(two.requests.at(-1)!.id, asked.id, 'one request, sent to both');
    two.close();
    one.close();

    // maker-2 now answers after the deadline: the quote does not wait for it, and its answer is refused.
    const fast = await connect('maker-1', offering(99_900n));
    const late = await connect('maker-2', offering(99_999n, DEADLINE_MS + 200));
    const started = performance.now();
    const withLate = await quote();
    const took = performance.now() - started;
    assert.deepEqual(withLate.body.result.map((q: Json) => q.solver_id), ['maker-1', SOLVER.id]);
    assert.ok(took >= DEADLINE_MS - 20 && took < DEADLINE_MS + 150, `the quote waited for the deadline only (${took.toFixed(0)} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await late.settled();
    const refused = late.answers.at(-1)!;
    assert.deepEqual([refused.status, refused.body.code], [409, 'quote_closed'], JSON.stringify(refused.body));
    assert.match(refused.body.error, /^quote request [0-9a-f-]{36} closed: answers are taken until its answer_by/);
    assert.equal(fast.answers.at(-1)!.status, 200);
    const metrics = (await t.api.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /hashlock_solver_quote_requests_total\{solver="maker-2",outcome="late"\} 1\n/);
    assert.match(metrics, /hashlock_solver_quote_requests_total\{solver="maker-2",outcome="unanswered"\} 1\n/);
    assert.match(metrics, /hashlock_solver_quote_requests_total\{solver="maker-1",outcome="answered"\} 2\n/);
    assert.match(metrics, /hashlock_solver_quote_streams 2\n/);
    fast.close();
    late.close();
  });

  test('POST /v2/orders: the best answer is matched, at its solver\'s proven addresses, its liquidity reserved, on its matched-orders stream', async () => {
    const one = await connect('maker-1', offering(99_900n));
    const two = await connect('maker-2', offering(99_800n));
    const mine = await SseClient.open(`${base}/solver/v1/orders/events`, { 'solver-key': makers['maker-1']!.key });
    const theirs = await SseClient.open(`${base}/solver/v1/orders/events`, { 'solver-key': makers['maker-2']!.key });
    const before = (await availableLiquidity(t.store.db, TO)).get('maker-1')!;

    const created = await order(99_850n, {}, 100_001n);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const orderId = created.body.result.order_id as string;
    assert.equal(one.requests.at(-1)!.purpose, 'order', 'an amount nobody quoted: the order asks');
    const read = (await appCall('GET', `/v2/orders/${orderId}`)).body.result;
    const maker = makers['maker-1']!.account.address;
    assert.equal(read.solver_id, 'maker-1');
    assert.equal(read.source_swap.redeemer, maker);
    assert.equal(read.destination_swap.initiator, maker);
    assert.equal(read.destination_swap.amount, '99850', 'the client asked for less than the best answer: it gets what it asked');
    assert.equal((await availableLiquidity(t.store.db, TO)).get('maker-1'), before - 99_850n, "maker-1's liquidity is reserved");

    const recorder = new OrderRecorder(t.store.db);
    recorder.touch(orderId);
    await recorder.tick();
    await mine.until(() => mine.events.length > 0, 10_000, "maker-1's matched order");
    assert.deepEqual(mine.data().map((e) => [e.order_id, e.status]), [[orderId, 'created']]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(theirs.events.length, 0, 'maker-2 hears nothing of an order it was not matched to');

    // A client's solver_id is honoured, even against a better answer; and the asked amount must be within its answer.
    const chosen = await order(99_800n, { solver_id: 'maker-2' }, 100_001n);
    assert.equal(chosen.status, 201, JSON.stringify(chosen.body));
    assert.equal((await appCall('GET', `/v2/orders/${chosen.body.result.order_id}`)).body.result.solver_id, 'maker-2');
    const greedy = await order(99_800n * 10_100n / 10_000n, { solver_id: 'maker-2', slippage: 50 }, 100_001n);
    assert.deepEqual([greedy.status, greedy.body.code], [400, 'slippage_exceeded'], JSON.stringify(greedy.body));
    assert.match(greedy.body.error, /quote: 99800/);

    // Another instance's resume: the stream from event 0 carries every order matched to the solver.
    const resumed = await SseClient.open(`${base}/solver/v1/orders/events?last_event_id=0`, { 'solver-key': makers['maker-1']!.key });
    await resumed.until(() => resumed.events.length > 0, 10_000, 'the backlog');
    assert.deepEqual(resumed.data().map((e) => e.order_id), [orderId]);
    for (const s of [mine, theirs, resumed, one, two]) s.close();
  });

  test('answers bind until their expiry: an order for a quoted amount is matched on the answers given, without a request; another amount asks again; an answer in its last 2 s is not used', async () => {
    let perHundredThousand = 99_950n;
    const maker = await connect('maker-1', (r) =>
      r.source_amount !== null
        ? { amount: (perHundredThousand * BigInt(r.source_amount)) / 100_000n, expiresInSeconds: r.source_amount === '300002' ? 2 : 30 }
        : { amount: (BigInt(r.destination_amount!) * 100_000n) / perHundredThousand + 1n },
    );
    const quoted = await appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=300000`);
    assert.deepEqual(quoted.body.result[0].destination.amount, '299850', JSON.stringify(quoted.body));
    const asked = maker.requests.length;
    perHundredThousand = 99_000n; // it would answer worse now, but its answer stands
    const created = await order(299_850n, {}, 300_000n);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const read = (await appCall('GET', `/v2/orders/${created.body.result.order_id}`)).body.result;
    assert.deepEqual([read.solver_id, read.destination_swap.amount], ['maker-1', '299850']);
    assert.equal(maker.requests.length, asked, 'no request: the order was matched on the standing answer');

    // A quote by destination amount stands for the source amount its answer named (as POST /v3/quote orders it).
    perHundredThousand = 99_950n;
    const byDestination = await appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&to_amount=199900`);
    const mine = byDestination.body.result.find((q: Json) => q.solver_id === 'maker-1');
    assert.equal(mine.source.amount, '200001', JSON.stringify(byDestination.body));
    const fromQuote = await order(199_900n, {}, 200_001n);
    assert.equal(fromQuote.status, 201, JSON.stringify(fromQuote.body));
    assert.equal((await appCall('GET', `/v2/orders/${fromQuote.body.result.order_id}`)).body.result.solver_id, 'maker-1');
    assert.equal(maker.requests.length, asked + 1, 'only the quote asked');

    const other = await order(299_800n, {}, 300_001n);
    assert.equal(other.status, 201, JSON.stringify(other.body));
    assert.deepEqual([maker.requests.length, maker.requests.at(-1)!.purpose, maker.requests.at(-1)!.source_amount], [asked + 2, 'order', '300001']);

    // An answer expiring within 2 s still shows in its quote, but an order asks again.
    assert.equal((await appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=300002`)).body.result[0].solver_id, 'maker-1');
    const late = await order(299_800n, {}, 300_002n);
    assert.equal(late.status, 201, JSON.stringify(late.body));
    assert.deepEqual([maker.requests.length, maker.requests.at(-1)!.purpose], [asked + 4, 'order'], 'the order asked again');
    maker.close();
  });

  test('what no solver can honour is not quoted: short liquidity, a suspended solver, nobody answering', async () => {
    await setSolverBalance(t.store.db, { solverId: 'maker-1', asset: TO, balance: 50_000n });
    const short = await connect('maker-1', offering(99_999n));
    const res = await quote();
    assert.deepEqual(res.body.result.map((q: Json) => q.solver_id), [SOLVER.id], 'maker-1 cannot pay 99,999');
    await setSolverBalance(t.store.db, { solverId: 'maker-1', asset: TO, balance: 50_000_000n });
    assert.equal((await quote()).body.result[0].solver_id, 'maker-1');

    await setSolverSuspended(t.store.db, 'maker-1', 'testing');
    const asked = short.requests.length;
    assert.deepEqual((await quote()).body.result.map((q: Json) => q.solver_id), [SOLVER.id]);
    assert.equal(short.requests.length, asked, 'a suspended solver is not even asked');
    const only = await order(99_800n, { solver_id: 'maker-1' });
    assert.deepEqual([only.status, only.body.code], [400, 'no_route']);
    assert.match(only.body.error, /now: suspended \(maker-1: testing\)/);
    await setSolverSuspended(t.store.db, 'maker-1', null);
    short.close();

    // A registered solver that does not answer: its solver_id gets no quote, after the deadline.
    const silent = await connect('maker-2', () => undefined);
    const unanswered = await order(99_800n, { solver_id: 'maker-2' }, 100_002n);
    assert.deepEqual([unanswered.status, unanswered.body.code], [400, 'no_route']);
    assert.match(unanswered.body.error, /no solver answered a quote request for ethereum_localnet:wbtc -> arbitrum_localnet:wbtc within 300 ms/);
    silent.close();
  });

  test('answer refusals: wrong amounts, a past expiry, an unknown request, one asked of another solver, an answer after the request closed', async () => {
    const results: Array<[string, number, string, string]> = [];
    const expiresAt = Math.floor(Date.now() / 1000) + 30;
    const answerAs = async (id: string) => {
      const cases: Array<[string, string, object]> = [
        ['wrong source amount', 'maker-1', { source_amount: '1', destination_amount: '99000', expires_at: expiresAt }],
        ['expired', 'maker-1', { source_amount: '100000', destination_amount: '99000', expires_at: expiresAt - 60 }],
        ['zero', 'maker-1', { source_amount: '100000', destination_amount: '0', expires_at: expiresAt }],
        ['not asked', 'maker-2', { source_amount: '100000', destination_amount: '99000', expires_at: expiresAt }],
        ['first', 'maker-1', { source_amount: '100000', destination_amount: '99000', expires_at: expiresAt }],
        ['second', 'maker-1', { source_amount: '100000', destination_amount: '99001', expires_at: expiresAt }],
      ];
      for (const [name, who, body] of cases) {
        const res = await solverCall(who, 'POST', `/solver/v1/quote-requests/${id}`, body);
        results.push([name, res.status, res.body.code ?? '', res.body.error ?? '']);
      }
    };
    let answering: Promise<void> | undefined;
    const holder = await connect('maker-1', (r) => {
      answering = answerAs(r.id);
      return undefined;
    });
    const quoted = await quote();
    await answering;
    assert.deepEqual(quoted.body.result.map((q: Json) => [q.solver_id, q.destination.amount]).slice(0, 1), [[SOLVER.id, IN_PROCESS.toString()]]);
    assert.deepEqual(
      results.map(([name, status, code]) => [name, status, code]),
      [
        ['wrong source amount', 400, 'invalid_request'],
        ['expired', 400, 'invalid_request'],
        ['zero', 400, 'invalid_request'],
        ['not asked', 404, 'not_found'],
        ['first', 200, ''],
        ['second', 409, 'quote_closed'],
      ],
    );
    assert.match(results[0]![3], /^source_amount: must be the requested 100000/);
    assert.match(results[1]![3], /^expires_at: /);
    assert.match(results[5]![3], /closed/, 'every solver asked has answered: the request is closed');
    // Its one answer (99,000) is worse than the in-process price, so it comes second.
    assert.deepEqual(quoted.body.result.map((q: Json) => q.solver_id), [SOLVER.id, 'maker-1']);
    const unknown = await solverCall('maker-1', 'POST', '/solver/v1/quote-requests/nope', { source_amount: '1', destination_amount: '1', expires_at: expiresAt });
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'not_found']);
    holder.close();
  });

  test('POST /solver/v1/quote-answers: several answers in one call, each taken or refused on its own as a single answer would be', async () => {
    let answering: Promise<{ status: number; body: Json }> | undefined;
    const expiresAt = Math.floor(Date.now() / 1000) + 30;
    const holder = await connect('maker-1', (r) => {
      answering = solverCall('maker-1', 'POST', '/solver/v1/quote-answers', {
        answers: [
          { request_id: r.id, source_amount: '1', destination_amount: '399000', expires_at: expiresAt },
          { request_id: 'nope', source_amount: '400000', destination_amount: '399000', expires_at: expiresAt },
          { request_id: r.id, source_amount: '400000', destination_amount: '399950', expires_at: expiresAt },
          { request_id: r.id, source_amount: '400000', destination_amount: '399960', expires_at: expiresAt },
        ],
      });
      return undefined;
    });
    const quoted = await appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=400000`);
    const batch = await answering!;
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
    assert.deepEqual(
      batch.body.result.map((o: Json) => [o.request_id === 'nope' ? 'nope' : 'asked', o.accepted, o.code ?? '']),
      [
        ['asked', false, 'invalid_request'],
        ['nope', false, 'not_found'],
        ['asked', true, ''],
        ['asked', false, 'conflict'],
      ],
    );
    assert.match(batch.body.result[3].error, /answered already/);
    assert.match(batch.body.result[0].error, /^source_amount: must be the requested 400000/);
    assert.deepEqual(quoted.body.result.map((q: Json) => [q.solver_id, q.destination.amount])[0], ['maker-1', '399950']);
    const empty = await solverCall('maker-1', 'POST', '/solver/v1/quote-answers', { answers: [] });
    assert.deepEqual([empty.status, empty.body.code], [400, 'invalid_request']);
    const stranger = await t.api.inject({ method: 'POST', url: '/solver/v1/quote-answers', headers: { 'solver-key': 'nope' }, payload: { answers: [] } });
    assert.equal(stranger.statusCode, 401);
    holder.close();
  });

  test('a revoked solver: never matched, even while it still answers; its open stream ends within the 5 s recheck, and it is asked nothing more', async () => {
    const revoked = await connect('maker-2', offering(99_990n));
    assert.equal((await quote()).body.result[0].solver_id, 'maker-2');
    assert.equal(await revokeSolver(t.store.db, 'maker-2'), true);
    // Until its stream's recheck it is still asked, and its answers stand and are the best; the order goes elsewhere.
    const askedBefore = revoked.requests.length;
    const created = await order(99_700n);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const fresh = await order(99_700n, {}, 100_003n);
    assert.equal(fresh.status, 201, JSON.stringify(fresh.body));
    assert.equal(revoked.requests.length, askedBefore + 1, 'asked for the unquoted order in the seconds before its stream notices');
    assert.equal((await appCall('GET', `/v2/orders/${fresh.body.result.order_id}`)).body.result.solver_id, SOLVER.id, 'not matched to the revoked solver');
    assert.equal((await appCall('GET', `/v2/orders/${created.body.result.order_id}`)).body.result.solver_id, SOLVER.id, 'not matched to the revoked solver');
    const started = Date.now();
    while (!revoked.closed && Date.now() - started < 8_000) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(revoked.closed, 'the stream ended');
    const asked = revoked.requests.length;
    assert.ok(!(await quote()).body.result.some((q: Json) => q.solver_id === 'maker-2'));
    assert.equal(revoked.requests.length, asked);
  });
});

describeEachStore("solver API: the operator's match-first window", (kind) => {
  let t: TestApi;
  let base: string;
  const keys: Record<string, string> = {};
  const open: QuotingSolver[] = [];

  before(async () => {
    t = await openTestApi(kind, undefined, { solverQuoteDeadlineMs: DEADLINE_MS, solverMatchFirst: { solvers: ['ranked'], windowMs: 150 } });
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
    for (const id of ['ranked', 'outsider']) {
      const account = privateKeyToAccount(generatePrivateKey());
      keys[id] = (await registerSolver(t.store.db, { id, name: id })).key;
      const call = (method: 'PUT', url: string, payload: object) => t.api.inject({ method, url, headers: { 'solver-key': keys[id]! }, payload });
      for (const chain of ['ethereum_localnet', 'arbitrum_localnet']) {
        await call('PUT', `/solver/v1/addresses/${chain}`, { address: account.address, signature: await account.signMessage({ message: solverAddressMessage(id, chain, account.address) }) });
      }
      assert.equal((await call('PUT', '/solver/v1/pairs', { pairs: [{ source_asset: FROM, destination_asset: TO }] })).statusCode, 200);
      await setSolverBalance(t.store.db, { solverId: id, asset: TO, balance: 50_000_000n });
    }
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: TO, balance: 50_000_000n });
  });
  after(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  const connect = async (id: string, price: Pricer) => {
    const solver = await QuotingSolver.connect(base, keys[id]!, price);
    open.push(solver);
    return solver;
  };
  const appCall = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.api.inject({ method, url, headers: { 'service-app-id': t.key }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };

  test('a chosen solver that matches the best price takes it, in the quote and the order; one that does not, does not', async () => {
    let matches = true;
    const ranked = await connect('ranked', (r) => ({ amount: r.match && matches ? BigInt(r.match.destination_amount) : 99_800n }));
    await connect('outsider', () => ({ amount: 99_900n }));
    const quoted = await appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=100000`);
    assert.deepEqual(
      quoted.body.result.map((q: Json) => [q.solver_id, q.destination.amount]),
      [
        ['ranked', '99900'],
        ['outsider', '99900'],
        [SOLVER.id, IN_PROCESS.toString()],
      ],
    );
    const offered = ranked.requests.at(-1)!;
    assert.deepEqual(offered.match, { source_amount: '100000', destination_amount: '99900' }, 'the match request names the best price');

    const order = (n: string) =>
      appCall('POST', '/v2/orders', {
        source: { asset: FROM, owner: USER, amount: '100000' },
        destination: { asset: TO, owner: USER, amount: '99900' },
        nonce: n,
      });
    const created = await order('m-1');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await appCall('GET', `/v2/orders/${created.body.result.order_id}`)).body.result.solver_id, 'ranked');

    matches = false;
    const unmatched = await order('m-2');
    assert.equal(unmatched.status, 201, JSON.stringify(unmatched.body));
    assert.equal((await appCall('GET', `/v2/orders/${unmatched.body.result.order_id}`)).body.result.solver_id, 'outsider');
    assert.deepEqual((await appCall('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=100000`)).body.result.map((q: Json) => q.solver_id).slice(0, 2), ['outsider', 'ranked']);
  });
});
