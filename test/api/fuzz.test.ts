// Generated bad requests to every endpoint, against an API whose order actions reach two real anvil
// chains: never a 5xx, always the documented envelope, and no existing order ever changes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { createApp } from '../../src/store/apps.ts';
import type { Store } from '../../src/store/database.ts';
import { localnetRegistry, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { openRelayedApi, startChains, type ChainKey, type LocalChain } from '../relayer/harness.ts';

/** Runs per endpoint and store: enough to hit every shape the arbitraries make, in a few seconds. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 120);

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

const VALID_ORDER = {
  source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
  destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
};

/** Any JSON value, deep and odd: the values a careless or hostile client sends. */
const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, 2 ** 53, '', ' ', '\u0000', '0x', 'null', '[]', '{}'),
  fc.string({ maxLength: 300 }),
  fc.bigInt({ min: 0n, max: 10n ** 80n }).map(String),
);

/** A valid order body with one field (possibly nested) replaced, removed or added. */
const mutatedOrder = fc
  .record({
    path: fc.constantFrom(
      'source', 'destination', 'source.asset', 'source.owner', 'source.amount', 'source.delegate', 'destination.asset',
      'destination.owner', 'destination.amount', 'destination.delegate', 'slippage', 'nonce', 'solver_id', 'secret_hash',
      'affiliate_fees', 'extra',
    ),
    value: anyJson,
    drop: fc.boolean(),
  })
  .map(({ path, value, drop }) => {
    const body = structuredClone(VALID_ORDER) as Record<string, unknown>;
    const [head, tail] = path.split('.') as [string, string | undefined];
    const target = tail === undefined ? body : (body[head] as Record<string, unknown>);
    const key = tail ?? head;
    if (drop) delete target[key];
    else target[key] = value;
    return JSON.stringify(body);
  });

const body = fc.oneof(
  mutatedOrder,
  anyJson.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 500 }),
  fc.record({ secret: anyJson, signature: anyJson, signatures: anyJson, tx: anyJson, order_id: anyJson, serialized_tx: anyJson }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  fc.constant(`{"a":"${'x'.repeat(140 * 1024)}"}`),
);

const hex64 = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 64, maxLength: 64 });

const segment = fc.oneof(
  hex64,
  fc.string({ maxLength: 80 }),
  fc.constantFrom('', '..', '%', '%00', '%ff', '0x' + 'a'.repeat(64), 'a'.repeat(300), 'instant-refund-hash'),
);

const queryValue = fc.oneof(anyJson.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))), fc.constantFrom('-1', '0', '1e30', '500', 'NaN', 'all,pending'));
const query = fc.dictionary(
  fc.constantFrom('action', 'asset', 'from', 'to', 'from_amount', 'to_amount', 'slippage', 'affiliate_fee', 'page', 'per_page', 'status', 'address', 'tx_hash', 'from_chain', 'to_chain', 'x'),
  queryValue,
  { maxKeys: 5 },
);

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 });
const contentType = fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data', '*/*', 'application/json; foo');

interface Endpoint {
  method: Method;
  /** `{id}` is replaced by an existing order id, a random one or a junk segment. */
  path: string;
}

const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/v3/chains' },
  { method: 'GET', path: '/v2/assets' },
  { method: 'GET', path: '/v2/chains' },
  { method: 'GET', path: '/v2/policy' },
  { method: 'GET', path: '/v2/liquidity' },
  { method: 'GET', path: '/v2/apps/earnings' },
  { method: 'GET', path: '/v2/quote' },
  { method: 'POST', path: '/v2/orders' },
  { method: 'GET', path: '/v2/orders' },
  { method: 'GET', path: '/v2/orders/{id}' },
  { method: 'GET', path: '/v2/orders/{id}/instant-refund-hash' },
  { method: 'PATCH', path: '/v2/orders/{id}' },
  { method: 'PATCH', path: '/v3/orders/{id}' },
  { method: 'POST', path: '/relayer/bitcoin/instant-refund-hash' },
  { method: 'POST', path: '/relayer/bitcoin/instant-refund' },
  { method: 'POST', path: '/relayer/bitcoin/redeem' },
  { method: 'GET', path: '/v3/quote/{id}' },
  { method: 'DELETE', path: '/v3/quote/{id}' },
  { method: 'GET', path: '/health' },
  { method: 'POST', path: '/v2/webhooks' },
  { method: 'GET', path: '/v2/webhooks' },
  { method: 'DELETE', path: '/v2/webhooks/{id}' },
  { method: 'POST', path: '/v2/webhooks/{id}/enable' },
  { method: 'GET', path: '/v2/webhooks/{id}/deliveries' },
  { method: 'POST', path: '/v3/quote' },
  { method: 'GET', path: '/v3/estimate' },
  { method: 'GET', path: '/v3/orders' },
  { method: 'GET', path: '/v3/orders/{id}' },
  { method: 'POST', path: '/v3/index' },
  { method: 'POST', path: '/v3/instant-refund-hash' },
  { method: 'GET', path: '/v3/assets' },
  { method: 'GET', path: '/v3/liquidity' },
  { method: 'GET', path: '/v2/volume' },
  { method: 'GET', path: '/v3/fees' },
  { method: 'GET', path: '/v3/health' },
  { method: 'GET', path: '/{id}/{id}' },
];

/** Every row of the orders and swaps tables, to compare before and after. */
async function ordersSnapshot(store: Store, ids: string[]): Promise<string> {
  const orders = await store.db.selectFrom('orders').selectAll().where('id', 'in', ids).orderBy('id').execute();
  const swaps = await store.db.selectFrom('swaps').selectAll().orderBy('swap_id').execute();
  return JSON.stringify({ orders, swaps: swaps.filter((s) => ids.includes(s.order_id)) }, (_k, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
  );
}

function checkAnswer(url: string, status: number, contentTypeHeader: string | undefined, text: string): void {
  const where = `${url.slice(0, 200)} -> ${status} ${text.slice(0, 300)}`;
  assert.ok(status < 500, `no 5xx: ${where}`);
  assert.match(contentTypeHeader ?? '', /^application\/json/, `JSON: ${where}`);
  const answer = JSON.parse(text) as Record<string, unknown>;
  const path = url.split('?')[0]!;
  // The Aggregator API shares these paths with the v3 draft (docs/api.md): its answers have its own shapes.
  const aggregator = ['/v3/orders', '/v3/estimate', '/v3/quote', '/v3/registry', '/v3/routes'].includes(path) || /^\/v3\/orders\/ord_/.test(path);
  if (aggregator && answer.status === undefined && (status < 300 || typeof answer.error === 'object')) {
    if (status >= 300) {
      const error = answer.error as Record<string, unknown>;
      assert.deepEqual(Object.keys(answer), ['error'], `the Aggregator's error: ${where}`);
      assert.equal(typeof error.code, 'string', where);
      assert.equal(typeof error.message, 'string', where);
      assert.equal(typeof error.retryable, 'boolean', where);
      assert.ok((error.message as string).length <= 1_100, `a bounded message: ${where}`);
    }
    return;
  }
  if (status < 300) {
    if (path !== '/health') assert.equal(answer.status, 'Ok', where);
    return;
  }
  if (path === '/v3/quote' || path.startsWith('/v3/quote/')) {
    assert.deepEqual(Object.keys(answer), ['error'], `the quote read's {error}: ${where}`);
  } else {
    assert.deepEqual(Object.keys(answer).sort(), ['code', 'error', 'status'], `the envelope: ${where}`);
    assert.equal(answer.status, 'Error', where);
  }
  assert.equal(typeof answer.error, 'string', where);
  assert.ok((answer.error as string).length <= 1_100, `a bounded message: ${where}`);
}

describeEachStore('fuzzed requests to every endpoint', (kind) => {
  const registry = localnetRegistry();
  let chains: Record<ChainKey, LocalChain>;
  let api: FastifyInstance;
  let store: Store;
  let keys: string[];
  let orderIds: string[];

  before(async () => {
    chains = await startChains(registry);
    const opened = await openRelayedApi(kind, registry, chains, { waitMs: 50, pollMs: 10 });
    api = opened.api;
    store = opened.store;
    const other = await createApp(store.db, { name: 'other app', gasless: false });
    keys = [opened.key, other.key];
    orderIds = [];
    for (const nonce of ['fuzz-1', 'fuzz-2']) {
      const res = await api.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': opened.key }, payload: { ...VALID_ORDER, nonce } });
      assert.equal(res.statusCode, 201, res.body);
      orderIds.push(res.json<{ result: { order_id: string } }>().result.order_id);
    }
  });
  after(async () => {
    await api?.close();
    await store?.close();
    for (const chain of Object.values(chains ?? {})) await chain.node.stop();
  });

  for (const endpoint of ENDPOINTS) {
    test(`${endpoint.method} ${endpoint.path}: ${RUNS} generated requests`, async () => {
      const before = await ordersSnapshot(store, orderIds);
      const request = fc.record({
        ids: fc.array(fc.oneof(fc.constantFrom(...orderIds), segment), { minLength: 2, maxLength: 2 }),
        query,
        rawQuery: fc.option(printable, { nil: undefined }),
        key: fc.oneof(fc.constantFrom(...keys), fc.constant(undefined), printable, hex64),
        keyHeader: fc.constantFrom('service-app-id', 'garden-app-id'),
        contentType,
        body: fc.option(body, { nil: undefined }),
        extraHeader: fc.option(fc.tuple(fc.constantFrom('accept', 'content-encoding', 'x-forwarded-for', 'transfer-encoding', 'expect', 'x-other'), printable), { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          let n = 0;
          const path = endpoint.path.replace(/\{id\}/g, () => encodeURIComponent(r.ids[n++]!));
          const search = r.rawQuery !== undefined ? `?${r.rawQuery.replace(/[#\s]/g, '')}` : `?${new URLSearchParams(r.query).toString()}`;
          const url = `${path}${search}`;
          const options: InjectOptions = {
            method: endpoint.method,
            url,
            headers: {
              ...(r.key !== undefined ? { [r.keyHeader]: r.key } : {}),
              ...(r.contentType ? { 'content-type': r.contentType } : {}),
              ...(r.extraHeader && r.extraHeader[0] !== 'transfer-encoding' ? { [r.extraHeader[0]]: r.extraHeader[1] } : {}),
            },
            ...(r.body !== undefined && endpoint.method !== 'GET' ? { payload: r.body } : {}),
          };
          const res = await api.inject(options);
          // The URL the server saw: the client resolves '..' and '.' segments, as every HTTP client does.
          checkAnswer(res.raw.req.url ?? url, res.statusCode, res.headers['content-type'] as string | undefined, res.body);
        }),
        { numRuns: RUNS },
      );
      assert.equal(await ordersSnapshot(store, orderIds), before, 'no existing order changed');
    });
  }
});
