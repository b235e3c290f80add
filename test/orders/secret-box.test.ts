import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSecretKey, SecretBox } from '../../src/orders/secret-box.ts';
import { ConfigError } from '../../src/config/schema-check.ts';
import { loadServiceConfig } from '../../src/config/service-config.ts';

test('a sealed secret opens with its key only, and any tampering is detected', () => {
  const box = new SecretBox(randomBytes(32));
  const secret = randomBytes(32);
  const sealed = box.seal(secret);
  assert.equal(sealed.length, 2 + 32 + 12 + 16 + 32);
  assert.ok(!Buffer.from(sealed).includes(secret), 'the plaintext does not appear');
  assert.deepEqual(Buffer.from(box.open(sealed)), secret);
  assert.notDeepEqual(Buffer.from(box.seal(secret)), Buffer.from(sealed), 'a fresh nonce each time');
  for (const at of [0, 1, 2, 20, 34, 46, 62, sealed.length - 1]) {
    const bad = Buffer.from(sealed);
    bad[at]! ^= 1;
    assert.throws(() => box.open(bad), `byte ${at} flipped`);
  }
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed), 'another key');
});

test("an API-only instance seals to the workers' public key and cannot open what it sealed; the workers can", () => {
  const key = randomBytes(32);
  const workers = new SecretBox(key);
  const api = SecretBox.sealingOnly(workers.publicKey);
  assert.equal(api.canOpen, false);
  const secret = randomBytes(32);
  const sealed = api.seal(secret);
  assert.throws(() => api.open(sealed), /this instance holds no secret key: sealed secrets are opened by the worker instances/);
  assert.deepEqual(Buffer.from(workers.open(sealed)), secret);
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed), 'another key');
  const config = join(mkdtempSync(join(tmpdir(), 'hashlock-sealing-')), 'hashlock.json');
  writeFileSync(config, JSON.stringify({ secret_public_key: 'abc' }));
  assert.throws(() => loadServiceConfig(config, {}), (err: unknown) => err instanceof ConfigError && /secret_public_key/.test(err.message), 'the config takes 64 hex only');
  assert.throws(() => SecretBox.sealingOnly(randomBytes(31)), /the sealing public key must be 32 bytes/);
});

test('a box of the older form (AES-256-GCM under the secret key itself) still opens', () => {
  const key = randomBytes(32);
  const secret = randomBytes(32);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([cipher.update(secret), cipher.final()]);
  const older = Buffer.concat([nonce, cipher.getAuthTag(), body]);
  assert.deepEqual(Buffer.from(new SecretBox(key).open(older)), secret);
  // One whose nonce begins with the new form's marker (and long enough to be read as one) opens too.
  const long = randomBytes(64);
  const marked = Buffer.concat([Buffer.from('S1'), randomBytes(10)]);
  const c2 = createCipheriv('aes-256-gcm', key, marked);
  const b2 = Buffer.concat([c2.update(long), c2.final()]);
  assert.deepEqual(Buffer.from(new SecretBox(key).open(Buffer.concat([marked, c2.getAuthTag(), b2]))), long);
});

test('the key comes from the environment, or from the data dir for the embedded database only', () => {
  const hex = randomBytes(32).toString('hex');
  assert.equal(Buffer.from(loadSecretKey({ HASHLOCK_SECRET_KEY: hex }, '/nonexistent', true)).toString('hex'), hex);
  assert.throws(() => loadSecretKey({ HASHLOCK_SECRET_KEY: 'abc' }, '/tmp', false), /HASHLOCK_SECRET_KEY: must be 64 hexadecimal characters/);
  assert.throws(() => loadSecretKey({}, '/tmp', true), /HASHLOCK_SECRET_KEY: is required with DATABASE_URL/);
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-key-'));
  const first = loadSecretKey({}, dir, false);
  assert.deepEqual(loadSecretKey({}, dir, false), first, 'the same key on the next start');
  assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
  assert.equal(readFileSync(join(dir, 'secret.key'), 'utf8').trim(), Buffer.from(first).toString('hex'));
});
