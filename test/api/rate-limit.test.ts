import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { createApp, setAppRateLimit } from '../../src/store/apps.ts';

const LIMITS = { perKey: { max: 20, windowMs: 60_000 }, perAddress: { max: 10, windowMs: 60_000 } };

// Counters are in memory, so one store kind is enough here.
test('rate limits: per app key, and per client address without a valid key', async (s) => {
  const t: TestApi = await openTestApi('pglite', undefined, { rateLimits: LIMITS, trustProxy: true });
  s.after(() => t.close());
  const api = t.api;
  const otherKey = (await createApp(t.store.db, { name: 'other' })).key;
  const get = (url: string, headers: Record<string, string> = {}) => api.inject({ url, headers });

  await s.test('a burst of wrong keys from one address gets 429 in the envelope with Retry-After', async () => {
    const from = { 'x-forwarded-for': '203.0.113.7' };
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await get('/v3/chains', { ...from, 'service-app-id': `${i}`.padStart(64, 'f') })).statusCode);
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.deepEqual(statuses.slice(10), Array(5).fill(429));
    const res = await get('/v3/chains', from);
    assert.equal(res.statusCode, 429);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After: ${res.headers['retry-after']}`);
    const body = res.json<{ status: string; code: string; error: string }>();
    assert.deepEqual([body.status, body.code], ['Error', 'rate_limited']);
    assert.match(body.error, /too many requests/);
    // Another address is not affected.
    assert.equal((await get('/v3/chains', { 'x-forwarded-for': '203.0.113.8' })).statusCode, 401);
  });

  await s.test('the quote read answers 429 as {error}', async () => {
    const from = { 'x-forwarded-for': '203.0.113.9' };
    let last = await get(`/v3/quote/${'c'.repeat(64)}`, from);
    for (let i = 0; i < 10; i++) last = await get(`/v3/quote/${'c'.repeat(64)}`, from);
    assert.equal(last.statusCode, 429);
    assert.deepEqual(Object.keys(last.json<object>()), ['error']);
    assert.ok(last.headers['retry-after']);
  });

  await s.test('a valid key has its own, larger budget, whatever address it comes from; each app its own', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      statuses.push((await get('/v3/chains', { 'service-app-id': t.key, 'x-forwarded-for': `198.51.100.${i}` })).statusCode);
    }
    // From the key's first request on, every request counts against the app.
    assert.deepEqual(statuses.slice(0, 20), Array(20).fill(200));
    assert.deepEqual(statuses.slice(20), Array(5).fill(429));
    assert.equal((await get('/v3/chains', { 'service-app-id': otherKey, 'x-forwarded-for': '198.51.100.200' })).statusCode, 200);
  });

  await s.test("a flood of wrong keys from one address does not starve a new app's first requests from it", async () => {
    const proxy = { 'x-forwarded-for': '203.0.113.50' };
    for (let i = 0; i < 12; i++) await get('/v3/chains', { ...proxy, 'service-app-id': `${i}`.padStart(64, 'e') });
    assert.equal((await get('/v3/chains', proxy)).statusCode, 429, 'the address is over its limit');
    const fresh = (await createApp(t.store.db, { name: 'new behind the proxy' })).key;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await get('/v3/chains', { ...proxy, 'service-app-id': fresh })).statusCode);
    assert.deepEqual(statuses, Array(5).fill(200), "the new app's key counts against the app from its first request");
    assert.equal((await get('/v3/chains', { ...proxy, 'service-app-id': 'not-a-key' })).statusCode, 429, 'a malformed key still counts against the address');
  });

  await s.test("an app's own limit replaces the per-key default; 'default' gives it back", async () => {
    const big = await createApp(t.store.db, { name: 'big integrator', rateLimit: { max: 40, windowMs: 60_000 } });
    const small = await createApp(t.store.db, { name: 'small integrator', rateLimit: { max: 3, windowMs: 60_000 } });
    const burst = async (key: string, n: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) statuses.push((await get('/v3/chains', { 'service-app-id': key, 'x-forwarded-for': `192.0.2.${i % 200}` })).statusCode);
      return statuses;
    };
    assert.deepEqual(await burst(big.key, 42), [...Array(40).fill(200), 429, 429], 'the big app gets 40, more than the default 20');
    const smallStatuses = await burst(small.key, 5);
    assert.deepEqual(smallStatuses, [200, 200, 200, 429, 429], 'the small app gets 3');
    const limited = await get('/v3/chains', { 'service-app-id': small.key });
    assert.match(limited.json<{ error: string }>().error, /at most 3 in/);

    // A changed limit applies once the instance looks the key up again (the key cache's 30 s; a new instance here).
    assert.equal(await setAppRateLimit(t.store.db, small.app.id, null), true);
    assert.equal(await setAppRateLimit(t.store.db, '00000000-0000-0000-0000-000000000000', null), false, 'no such app');
    const again = await openTestApi('pglite', undefined, { rateLimits: LIMITS, trustProxy: true });
    try {
      const other = await createApp(again.store.db, { name: 'defaults', rateLimit: { max: 3, windowMs: 60_000 } });
      assert.equal(await setAppRateLimit(again.store.db, other.app.id, null), true);
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) statuses.push((await again.api.inject({ url: '/v3/chains', headers: { 'service-app-id': other.key } })).statusCode);
      assert.deepEqual(statuses, [...Array(20).fill(200), 429], "back to the config's per-key 20");
    } finally {
      await again.close();
    }
  });

  await s.test('health and metrics are never limited', async () => {
    for (let i = 0; i < 30; i++) {
      assert.equal((await get('/health', { 'x-forwarded-for': '203.0.113.7' })).statusCode, 200);
    }
  });
});
