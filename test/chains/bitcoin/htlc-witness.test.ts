import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { hex } from '@scure/base';
import { htlcPayment } from '../../../src/chains/bitcoin/htlc.ts';
import { htlcSpendOf } from '../../../src/chains/bitcoin/htlc-witness.ts';

const key = () => hex.encode(schnorr.getPublicKey(schnorr.utils.randomSecretKey()));
const secret = randomBytes(32);
const { spends } = htlcPayment({ initiator: key(), redeemer: key(), secretHash: hex.encode(sha256(secret)), timelock: 144n }, 'litecoin_regtest');
const sig = hex.encode(randomBytes(64));
const leafAndBlock = (leaf: keyof typeof spends) => [hex.encode(spends[leaf].script), hex.encode(spends[leaf].controlBlock)];

test('the redeem leaf gives the secret, witness item 1', () => {
  assert.deepEqual(htlcSpendOf([sig, hex.encode(secret), ...leafAndBlock('redeem')]), { kind: 'redeem', secret: hex.encode(secret) });
});

test('the refund and instant-refund leaves are told apart', () => {
  assert.deepEqual(htlcSpendOf([sig, ...leafAndBlock('refund')]), { kind: 'refund' });
  assert.deepEqual(htlcSpendOf([sig, sig, ...leafAndBlock('instantRefund')]), { kind: 'instantRefund' });
});

test('an annex after the control block is skipped', () => {
  assert.deepEqual(htlcSpendOf([sig, ...leafAndBlock('refund'), '50aa']), { kind: 'refund' });
});

test('anything else is no HTLC spend: key path, segwit v0, a wrong secret, wrong item counts, a bad control block', () => {
  assert.equal(htlcSpendOf([sig]), undefined);
  assert.equal(htlcSpendOf([`30440220${'11'.repeat(66)}`, `02${'22'.repeat(32)}`]), undefined);
  assert.equal(htlcSpendOf([sig, hex.encode(randomBytes(32)), ...leafAndBlock('redeem')]), undefined);
  assert.equal(htlcSpendOf([hex.encode(secret), ...leafAndBlock('redeem')]), undefined);
  assert.equal(htlcSpendOf([sig, sig, ...leafAndBlock('refund')]), undefined);
  assert.equal(htlcSpendOf([sig, ...leafAndBlock('instantRefund')]), undefined);
  const [leaf, controlBlock] = leafAndBlock('refund') as [string, string];
  assert.equal(htlcSpendOf([sig, leaf, `c2${controlBlock.slice(2)}`]), undefined, 'not a tapscript leaf version');
  assert.equal(htlcSpendOf([sig, 'zz', controlBlock]), undefined);
});
