// The explorer's routes without a browser: its static files and their headers, and the public JSON
// the page reads (recent orders across apps, the search, an order with its timeline, the registry).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { EXPLORER_CSP } from '../../src/explorer/routes.ts';
import { createApp } from '../../src/store/apps.ts';
import { appendOrderEvents } from '../../src/store/order-events.ts';
import { insertOrder, type NewOrder } from '../../src/store/orders.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32, sampleOrder, USER } from '../helpers/fixtures.ts';
import { SseClient } from '../helpers/sse.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;

const source = (name: string) => readFileSync(new URL(`../../src/explorer/${name}`, import.meta.url), 'utf8');

test('the page has no inline script, style or handler, and the script never parses data as markup', () => {
  const html = source('page.html');
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /\bsrc="\/explorer\/assets\/explorer\.js"/, tag);
  assert.doesNotMatch(html, /<script\b[^>]*>[^<]+<\/script>/, 'no inline script');
  assert.doesNotMatch(html, /<style\b|\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
  const js = source('explorer.js');
  assert.doesNotMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
});

describeEachStore('explorer routes', (kind) => {
  let t: TestApi;
  let otherApp: string;
  /** Every order, oldest first. */
  const all: NewOrder[] = [];
  let minute = 0;
  const EVM_TX = `0x${randomHex32()}`;
  const OTHER_USER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

  async function addOrder(appId: string, overrides: Partial<NewOrder> = {}) {
    const order = sampleOrder(appId, overrides);
    await insertOrder(t.store.db, order);
    minute += 1;
    await t.store.db.updateTable('orders').set({ created_at: new Date(Date.UTC(2027, 0, 1, 0, minute)) }).where('id', '=', order.id).execute();
    all.push(order);
    return order;
  }

  const get = async (url: string) => {
    const res = await t.api.inject({ url });
    return { status: res.statusCode, headers: res.headers, body: res.body, json: () => res.json<Json>() };
  };
  const search = async (query: string) => {
    const res = await get(`/explorer/api/orders${query}`);
    assert.equal(res.status, 200, res.body);
    return res.json().result as { match: string; data: Json[]; page: number; total_pages: number; total_items: number; per_page: number };
  };
  const newestFirst = () => [...all].reverse().map((o) => o.id);

  before(async () => {
    t = await openTestApi(kind);
    otherApp = (await createApp(t.store.db, { name: 'other app' })).app.id;
    for (let i = 0; i < 3; i++) await addOrder(t.appId);
    const other = await addOrder(otherApp, {});
    await t.store.db.updateTable('swaps').set({ initiator: OTHER_USER }).where('order_id', '=', other.id).where('side', '=', 'source').execute();
    await t.store.db
      .updateTable('swaps')
      .set({ initiate_tx_hash: EVM_TX, initiate_block_number: '12' })
      .where('order_id', '=', all[1]!.id)
      .where('side', '=', 'destination')
      .execute();
  });
  after(() => t.close());

  test('serves the page for /explorer and each order, its script and style, with a self-only CSP', async () => {
    for (const [url, type] of [
      ['/explorer', 'text/html'],
      ['/explorer/', 'text/html'],
      [`/explorer/orders/${all[0]!.id}`, 'text/html'],
      ['/explorer/assets/explorer.js', 'text/javascript'],
      ['/explorer/assets/explorer.css', 'text/css'],
      ['/explorer/assets/icon.svg', 'image/svg+xml'],
    ] as const) {
      const res = await get(url);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers['content-type'], `${type}; charset=utf-8`, url);
      assert.equal(res.headers['content-security-policy'], EXPLORER_CSP, url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    }
    assert.match(EXPLORER_CSP, /default-src 'none'/);
    assert.doesNotMatch(EXPLORER_CSP, /unsafe|\*|https?:/);
  });

  test('an order page with a malformed id is still the page, as a 400; its JSON read is the 400 naming the parameter', async () => {
    const res = await get('/explorer/orders/not-an-order');
    assert.equal(res.status, 400);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['content-security-policy'], EXPLORER_CSP);
    const read = await get('/explorer/api/orders/not-an-order');
    assert.equal(read.status, 400);
    assert.match(read.json().error, /'order'/);
  });

  test('the registry read gives each chain its explorer_url and each asset its decimals, without a key', async () => {
    const res = await get('/explorer/api/registry');
    assert.equal(res.status, 200);
    const { chains, assets } = res.json().result;
    assert.deepEqual(
      chains.map((c: Json) => c.chain),
      t.registry.chains.map((c) => c.key),
    );
    assert.ok(chains.every((c: Json) => typeof c.explorer_url === 'string' && typeof c.name === 'string'));
    const wbtc = assets.find((a: Json) => a.id === 'ethereum_localnet:wbtc');
    assert.deepEqual(wbtc, { id: 'ethereum_localnet:wbtc', chain: 'ethereum_localnet', symbol: 'wbtc', name: 'Wrapped Bitcoin (test)', decimals: 8 });
  });

  test("recent orders are every app's, newest first, each exactly as the order read shows it, without a key", async () => {
    const page = await search('');
    assert.equal(page.match, 'recent');
    assert.deepEqual(
      page.data.map((o) => o.order_id),
      newestFirst(),
    );
    assert.deepEqual([page.page, page.total_pages, page.total_items, page.per_page], [1, 1, all.length, 20]);
    const read = await t.api.inject({ url: `/v2/orders/${all[0]!.id}`, headers: { 'service-app-id': t.key } });
    assert.deepEqual(page.data.at(-1), read.json<Json>().result);
    const second = await search('?per_page=2&page=2');
    assert.deepEqual(
      second.data.map((o) => o.order_id),
      newestFirst().slice(2, 4),
    );
    assert.equal(second.total_pages, 2);
  });

  test('a search by order id finds it in any case, with or without 0x', async () => {
    for (const q of [all[2]!.id, all[2]!.id.toUpperCase(), `0x${all[2]!.id}`, ` ${all[2]!.id} `]) {
      const found = await search(`?q=${encodeURIComponent(q)}`);
      assert.equal(found.match, 'order', q);
      assert.deepEqual(
        found.data.map((o) => o.order_id),
        [all[2]!.id],
      );
    }
  });

  test("a search by address finds the orders where it is a party, across apps, compared as its chain does", async () => {
    const mine = await search(`?q=${USER.toLowerCase()}`);
    assert.equal(mine.match, 'address');
    assert.deepEqual(
      mine.data.map((o) => o.order_id),
      newestFirst(),
      'USER is the redeemer of every destination',
    );
    const other = await search(`?q=${OTHER_USER}`);
    assert.equal(other.match, 'address');
    assert.deepEqual(
      other.data.map((o) => o.order_id),
      [all[3]!.id],
    );
  });

  test('a search by transaction hash finds its order', async () => {
    const found = await search(`?q=${EVM_TX.toUpperCase().replace('0X', '0x')}`);
    assert.equal(found.match, 'tx_hash');
    assert.deepEqual(
      found.data.map((o) => o.order_id),
      [all[1]!.id],
    );
  });

  test('a search that matches nothing says so', async () => {
    for (const q of ['hello', randomHex32(), '0x0000000000000000000000000000000000000001']) {
      const found = await search(`?q=${q}`);
      assert.deepEqual([found.match, found.data, found.total_items, found.total_pages], ['none', [], 0, 0], q);
    }
  });

  test('bad query parameters are 400s naming the field, never 500s', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?q=', /'q'/],
      ['?q=%20%20', /'q'.*blank/],
      ['?q=a%00b', /'q'/],
      ['?q=a%0Ab', /'q'/],
      [`?q=${'a'.repeat(201)}`, /'q'/],
      ['?page=0', /'page'/],
      ['?page=x', /'page'/],
      ['?per_page=101', /'per_page'/],
      ['?q=a&q=b', /'q'/],
    ];
    for (const [query, message] of cases) {
      const res = await get(`/explorer/api/orders${query}`);
      assert.equal(res.status, 400, `${query}: ${res.body}`);
      assert.equal(res.json().code, 'invalid_request');
      assert.match(res.json().error, message, query);
    }
  });

  test('an order read gives the order as GET /v2/orders/{id} shows it and its recorded status changes, oldest first', async () => {
    const order = all[1]!;
    for (const status of ['created', 'initiated', 'awaiting_redeem']) {
      await t.store.db.insertInto('order_events').values({ order_id: order.id, app_id: order.appId, status, order_json: '{}' }).execute();
    }
    const res = await get(`/explorer/api/orders/${order.id.toUpperCase()}`);
    assert.equal(res.status, 200, res.body);
    const { order: shown, events } = res.json().result;
    const read = await t.api.inject({ url: `/v2/orders/${order.id}`, headers: { 'service-app-id': t.key } });
    assert.deepEqual(shown, read.json<Json>().result);
    assert.deepEqual(
      events.map((e: Json) => e.status),
      ['created', 'initiated', 'awaiting_redeem'],
    );
    assert.ok(events.every((e: Json) => /^\d+$/.test(e.id) && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(e.created_at)));
    assert.ok(BigInt(events[0].id) < BigInt(events[2].id));
    const none = await get(`/explorer/api/orders/${all[0]!.id}`);
    assert.deepEqual(none.json().result.events, []);
  });

  test('an unknown order is a 404, a malformed id a 400', async () => {
    const unknown = await get(`/explorer/api/orders/${randomHex32()}`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json().code, 'not_found');
    const bad = await get('/explorer/api/orders/xyz');
    assert.equal(bad.status, 400);
    assert.match(bad.json().error, /'order'/);
  });
});

describeEachStore('explorer event streams', (kind) => {
  let t: TestApi;
  let base: string;
  const orders: NewOrder[] = [];
  /** Records a status change of `order` as the recorder does (it notifies the hub). */
  const record = (order: NewOrder, status: 'created' | 'initiated') =>
    t.store.db.transaction().execute((trx) => appendOrderEvents(trx, [{ orderId: order.id, appId: order.appId, solverId: order.solverId, type: 'order.status', status, orderJson: '{}', failures: '' }]));

  before(async () => {
    t = await openTestApi(kind);
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
    for (let i = 0; i < 2; i++) {
      const order = sampleOrder(t.appId);
      await insertOrder(t.store.db, order);
      orders.push(order);
    }
  });
  after(() => t.close());

  test("an order's stream (its history, then live) and every order's stream need no key", async () => {
    const [order, other] = orders as [NewOrder, NewOrder];
    await record(order, 'created');
    const one = await SseClient.open(`${base}/explorer/api/orders/${order.id.toUpperCase()}/events`);
    const every = await SseClient.open(`${base}/explorer/api/events`);
    try {
      for (const stream of [one, every]) {
        assert.equal(stream.response.statusCode, 200);
        assert.match(stream.response.headers['content-type']!, /^text\/event-stream/);
      }
      await one.until(() => one.events.length === 1, 10_000, 'the order history');
      await record(order, 'initiated');
      await record(other, 'created');
      await one.until(() => one.events.length === 2, 10_000, 'the live event');
      await every.until(() => every.events.length === 2, 10_000, 'both new events');
      assert.deepEqual(
        one.data().map((e) => e.status),
        ['created', 'initiated'],
      );
      assert.deepEqual(
        every.data().map((e) => [e.order_id, e.status]),
        [
          [order.id, 'initiated'],
          [other.id, 'created'],
        ],
      );
      assert.ok(one.events.every((e) => /^\d+$/.test(e.id ?? '') && e.event === undefined), 'unnamed events with ids');
    } finally {
      one.close();
      every.close();
    }
  });

  test('a stream of an unknown order is a 404; a bad id or last_event_id a 400 naming it', async () => {
    const cases: Array<[string, number, RegExp]> = [
      [`/explorer/api/orders/${randomHex32()}/events`, 404, /not found/],
      ['/explorer/api/orders/xyz/events', 400, /'order'/],
      [`/explorer/api/orders/${orders[0]!.id}/events?last_event_id=abc`, 400, /last_event_id/],
      ['/explorer/api/events?last_event_id=-1', 400, /last_event_id/],
    ];
    for (const [url, status, message] of cases) {
      const res = await t.api.inject({ url });
      assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      assert.match(res.json<Json>().error, message, url);
    }
  });

  test('one client address holds at most maxPublicStreamsPerAddress public streams; keyed streams do not count', async () => {
    const capped = await openTestApi(kind, undefined, { eventStreams: { maxPublicStreamsPerAddress: 2 } });
    const capBase = await capped.api.listen({ port: 0, host: '127.0.0.1' });
    const order = sampleOrder(capped.appId);
    await insertOrder(capped.store.db, order);
    const open: SseClient[] = [];
    try {
      open.push(await SseClient.open(`${capBase}/explorer/api/events`));
      open.push(await SseClient.open(`${capBase}/explorer/api/orders/${order.id}/events`));
      for (const path of ['/explorer/api/events', `/explorer/api/orders/${order.id}/events`]) {
        const refused = await fetch(`${capBase}${path}`);
        assert.equal(refused.status, 429, path);
        const body = (await refused.json()) as Json;
        assert.equal(body.code, 'rate_limited');
        assert.match(body.error, /too many open event streams from 127\.0\.0\.1 \(at most 2\)/);
      }
      const keyed = await SseClient.open(`${capBase}/v2/events`, { 'service-app-id': capped.key });
      open.push(keyed);
      assert.equal(keyed.response.statusCode, 200, 'an app\'s stream is not a public one');
      open.shift()!.close();
      // The server hears the close a moment later.
      let again = await SseClient.open(`${capBase}/explorer/api/events`);
      for (let tries = 0; again.response.statusCode === 429 && tries < 50; tries++) {
        again.close();
        await new Promise((r) => setTimeout(r, 100));
        again = await SseClient.open(`${capBase}/explorer/api/events`);
      }
      open.push(again);
      assert.equal(again.response.statusCode, 200, 'a closed stream frees its place');
    } finally {
      for (const client of open) client.close();
      await capped.close();
    }
  });
});
