import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { retryDelayMs } from '../../src/webhooks/delivery-worker.ts';
import { generateWebhookSecret, signWebhook, verifyWebhookSignature } from '../../src/webhooks/signature.ts';

const secret = 'whsec_test';
const body = '{"id":"1","type":"order.status"}';
const at = new Date('2026-01-02T03:04:05Z');
const t = Math.floor(at.getTime() / 1000);

test('the signature is t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  assert.equal(signWebhook(secret, body, t), `t=${t},v1=${expected}`);
  assert.match(generateWebhookSecret(), /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(generateWebhookSecret(), generateWebhookSecret());
});

test('verification: the body, the secret and the replay window must match', () => {
  const header = signWebhook(secret, body, t);
  assert.equal(verifyWebhookSignature(secret, header, body, { now: at }), true);
  assert.equal(verifyWebhookSignature(secret, header, body, { now: new Date(at.getTime() + 300_000) }), true, '5 minutes late is still in the window');
  assert.equal(verifyWebhookSignature(secret, header, body, { now: new Date(at.getTime() + 301_000) }), false, 'a replay after 5 minutes');
  assert.equal(verifyWebhookSignature(secret, header, body, { now: new Date(at.getTime() - 301_000) }), false, 'from the future');
  assert.equal(verifyWebhookSignature(secret, header, body, { now: new Date(at.getTime() + 3_000_000), toleranceSeconds: 3_600 }), true);
  assert.equal(verifyWebhookSignature(secret, header, `${body}\n`, { now: at }), false);
  assert.equal(verifyWebhookSignature('whsec_other', header, body, { now: at }), false);
  // Another timestamp with the same MAC: the timestamp is signed too.
  assert.equal(verifyWebhookSignature(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, { now: at }), false);
  // Several v1 entries (a secret being rotated): any may match.
  const other = signWebhook('whsec_old', body, t).split(',')[1]!;
  assert.equal(verifyWebhookSignature(secret, `t=${t},${other},${header.split(',')[1]}`, body, { now: at }), true);
  for (const malformed of [undefined, '', 'v1=abc', `t=${t}`, `t=x,v1=${'0'.repeat(64)}`, `t=${t},v1=zz`, 'garbage']) {
    assert.equal(verifyWebhookSignature(secret, malformed, body, { now: at }), false, String(malformed));
  }
});

test('retries back off exponentially from the first delay to the cap, with jitter of ±20 %', () => {
  const mid = () => 0.5;
  assert.deepEqual([1, 2, 3, 4, 10, 20, 1000].map((n) => retryDelayMs(n, 10_000, 3_600_000, mid)), [10_000, 20_000, 40_000, 80_000, 3_600_000, 3_600_000, 3_600_000]);
  assert.equal(retryDelayMs(1, 10_000, 3_600_000, () => 0), 8_000);
  assert.equal(retryDelayMs(1, 10_000, 3_600_000, () => 0.999999), 12_000);
});
