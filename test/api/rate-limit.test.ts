import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { createApp } from '../../src/store/apps.ts';

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
    // The first request resolves the key (counted against its address); the next 20 against the app.
    assert.deepEqual(statuses.slice(0, 21), Array(21).fill(200));
    assert.deepEqual(statuses.slice(21), Array(4).fill(429));
    assert.equal((await get('/v3/chains', { 'service-app-id': otherKey, 'x-forwarded-for': '198.51.100.200' })).statusCode, 200);
  });

  await s.test('health and metrics are never limited', async () => {
    for (let i = 0; i < 30; i++) {
      assert.equal((await get('/health', { 'x-forwarded-for': '203.0.113.7' })).statusCode, 200);
    }
  });
});
