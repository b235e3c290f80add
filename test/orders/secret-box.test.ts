import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadSecretKey, SecretBox } from '../../src/orders/secret-box.ts';

test('a sealed secret opens with its key only, and any tampering is detected', () => {
  const box = new SecretBox(randomBytes(32));
  const secret = randomBytes(32);
  const sealed = box.seal(secret);
  assert.equal(sealed.length, 12 + 16 + 32);
  assert.ok(!Buffer.from(sealed).includes(secret), 'the plaintext does not appear');
  assert.deepEqual(Buffer.from(box.open(sealed)), secret);
  assert.notDeepEqual(Buffer.from(box.seal(secret)), Buffer.from(sealed), 'a fresh nonce each time');
  for (const at of [0, 12, 30, sealed.length - 1]) {
    const bad = Buffer.from(sealed);
    bad[at]! ^= 1;
    assert.throws(() => box.open(bad), `byte ${at} flipped`);
  }
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed), 'another key');
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
