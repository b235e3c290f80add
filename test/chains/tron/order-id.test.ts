import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeAbiParameters, parseAbiParameters, sha256 } from 'viem';
import { tronHtlc } from '../../../src/chains/tron/index.ts';
import { HTLC, INITIATOR, INITIATOR_ACCOUNT, REDEEMER, SECRET_HASH, terms, tronChain } from './fixtures.ts';

test('Tron swap id equals sha256(abi.encode(chainid, secretHash, initiator, redeemer, timelock, amount, htlc))', () => {
  // Computed independently: literal 20-byte forms of the fixture addresses, Tron mainnet chain id.
  const encoded = encodeAbiParameters(parseAbiParameters('uint256, bytes32, address, address, uint256, uint256, address'), [
    728126428n,
    `0x${SECRET_HASH}`,
    INITIATOR_ACCOUNT.address,
    '0x775f057150b85086f456aac88fd52ba8e35db282',
    28_800n,
    25_000_000n,
    '0x517591d35d313bf6a5e33098284502b045e2bc08',
  ]);
  const expected = sha256(encoded).slice(2);
  assert.equal(tronHtlc.swapId(terms()), expected);
  assert.match(expected, /^[0-9a-f]{64}$/);
});

test('Tron swap id is deterministic and accepts 41-hex addresses and an upper-case secret hash', () => {
  const id = tronHtlc.swapId(terms());
  assert.equal(tronHtlc.swapId(terms({ redeemer: '41775f057150b85086f456aac88fd52ba8e35db282', secretHash: SECRET_HASH.toUpperCase() })), id);
});

test('Tron swap id changes with each input', () => {
  const ids = [
    tronHtlc.swapId(terms()),
    tronHtlc.swapId(terms({}, tronChain(HTLC, 'tron:3448148188'))), // Nile
    tronHtlc.swapId(terms({ secretHash: SECRET_HASH.replace(/f$/, 'e') })),
    tronHtlc.swapId(terms({ initiator: REDEEMER, redeemer: INITIATOR })),
    tronHtlc.swapId(terms({ redeemer: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' })),
    tronHtlc.swapId(terms({ timelock: 28_801n })),
    tronHtlc.swapId(terms({ amount: 25_000_001n })),
    tronHtlc.swapId(terms({}, tronChain('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'))),
  ];
  assert.equal(new Set(ids).size, ids.length);
});

test('Tron swap id refuses bad terms', () => {
  assert.throws(() => tronHtlc.swapId(terms({ initiator: INITIATOR_ACCOUNT.address })), /initiator: .* is not a Tron address/);
  assert.throws(() => tronHtlc.swapId(terms({ secretHash: `0x${SECRET_HASH}` })), /secretHash: must be 64 hex/);
  assert.throws(() => tronHtlc.swapId(terms({}, tronChain(''))), /tron:usdt: the asset has no HTLC address/);
  assert.throws(() => tronHtlc.swapId(terms({}, tronChain(HTLC, 'evm:1'))), /chain id "evm:1" is not tron:<number>/);
});
