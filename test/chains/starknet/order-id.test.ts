import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hash } from 'starknet';
import { starknetHtlc } from '../../../src/chains/starknet/index.ts';
import { INITIATOR, REDEEMER, SECRET_HASH, starknetChain, terms } from './fixtures.ts';

const SN_MAIN = '0x534e5f4d41494e'; // 'SN_MAIN' as a shortstring
const WORDS = [0xa0b1c2d3, 0xe4f50617, 0x28394a5b, 0x6c7d8e9f, 0x00112233, 0x44556677, 0x8899aabb, 0xccddeeff];

test('Starknet swap id is Poseidon(chain id shortstring, 8 secret-hash words, initiator)', () => {
  const expected = BigInt(hash.computePoseidonHashOnElements([SN_MAIN, ...WORDS, INITIATOR]));
  const id = starknetHtlc.swapId(terms());
  assert.match(id, /^0x[0-9a-f]{64}$/);
  assert.equal(BigInt(id), expected);
  assert.equal(id, `0x${expected.toString(16).padStart(64, '0')}`);
});

test('Starknet swap id is deterministic and ignores how the initiator is written', () => {
  const id = starknetHtlc.swapId(terms());
  assert.equal(starknetHtlc.swapId(terms()), id);
  assert.equal(starknetHtlc.swapId(terms({ initiator: INITIATOR.replace('0x0', '0x').toUpperCase().replace('0X', '0x') })), id);
});

test('Starknet swap id changes with the network, every secret-hash word and the initiator', () => {
  const base = starknetHtlc.swapId(terms());
  const variants = new Set<string>([base]);
  variants.add(starknetHtlc.swapId(terms({}, starknetChain('SN_SEPOLIA'))));
  variants.add(starknetHtlc.swapId(terms({ initiator: REDEEMER })));
  for (let word = 0; word < 8; word++) {
    const i = word * 8 + 7; // the last hex digit of each word
    const flipped = SECRET_HASH.slice(0, i) + (SECRET_HASH[i] === '0' ? '1' : '0') + SECRET_HASH.slice(i + 1);
    variants.add(starknetHtlc.swapId(terms({ secretHash: flipped })));
  }
  assert.equal(variants.size, 11);
});

test('Starknet swap id does not depend on redeemer, amount, timelock or HTLC (the contract hashes only chain, hash, initiator)', () => {
  const base = starknetHtlc.swapId(terms());
  assert.equal(starknetHtlc.swapId(terms({ redeemer: INITIATOR, amount: 1n, timelock: 1n })), base);
  assert.equal(starknetHtlc.swapId(terms({}, starknetChain('SN_MAIN', '0x1'))), base);
});

test('Starknet swap id refuses a bad initiator or secret hash', () => {
  assert.throws(() => starknetHtlc.swapId(terms({ initiator: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' })), /initiator: .* is not a Starknet address/);
  assert.throws(() => starknetHtlc.swapId(terms({ secretHash: SECRET_HASH.slice(2) })), /secretHash: must be 64 hex/);
});
