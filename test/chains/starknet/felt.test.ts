import assert from 'node:assert/strict';
import { test } from 'node:test';
import { starknetHtlc } from '../../../src/chains/starknet/index.ts';
import { secretHashWords, splitU256 } from '../../../src/chains/starknet/felt.ts';
import { starknetChain } from './fixtures.ts';

const pad = (hex: string): string => `0x${hex.padStart(64, '0')}`;

const addresses: Array<[string, string, string | undefined]> = [
  ['one hex digit', '0x1', pad('1')],
  ['a canonical address', '0x03fe2b97c1fd336e750087d68b9b867997fd64a2661ff3ca5a7c771641e8e7ac', '0x03fe2b97c1fd336e750087d68b9b867997fd64a2661ff3ca5a7c771641e8e7ac'],
  ['a leading zero dropped', '0x3fe2b97c1fd336e750087d68b9b867997fd64a2661ff3ca5a7c771641e8e7ac', '0x03fe2b97c1fd336e750087d68b9b867997fd64a2661ff3ca5a7c771641e8e7ac'],
  ['several leading zeros dropped', '0x5b946a388e416709b20b49b4919de92bebbf363b23887e1d14da4593d6204', '0x0005b946a388e416709b20b49b4919de92bebbf363b23887e1d14da4593d6204'],
  ['upper-case hex', '0x064B48806902A367C8598F4F95C305E8C1A1ACBA5F082D294A43793113115691', '0x064b48806902a367c8598f4f95c305e8c1a1acba5f082d294a43793113115691'],
  ['the largest address (2^251 - 257)', `0x${(2n ** 251n - 257n).toString(16)}`, pad((2n ** 251n - 257n).toString(16))],
  ['2^251 - 256 (address bound)', `0x${(2n ** 251n - 256n).toString(16)}`, undefined],
  ['2^251', `0x${(2n ** 251n).toString(16)}`, undefined],
  ['64 hex digits above the field', `0x${'f'.repeat(64)}`, undefined],
  ['65 hex digits', `0x0${'1'.repeat(64)}`, undefined],
  ['zero', '0x0', undefined],
  ['an empty string', '', undefined],
  ['bare 0x', '0x', undefined],
  ['no 0x prefix', '3fe2b97c1fd336e750087d68b9b867997fd64a2661ff3ca5a7c771641e8e7ac', undefined],
  ['upper-case 0X prefix', '0X1', undefined],
  ['a non-hex digit', '0x12g4', undefined],
  ['surrounding spaces', ' 0x1 ', undefined],
  ['a decimal felt', '12345', undefined],
  ['an EVM address', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', pad('70997970c51812dc3a010c7d01b50e0d17dc79c8')],
];

for (const [name, input, expected] of addresses) {
  test(`Starknet normalizeAddress: ${name}`, () => {
    assert.equal(starknetHtlc.normalizeAddress(starknetChain(), input), expected);
  });
}

test('Starknet normalizeAddress is idempotent and the same on both networks', () => {
  for (const [, input, expected] of addresses) {
    if (expected === undefined) continue;
    assert.equal(starknetHtlc.normalizeAddress(starknetChain(), expected), expected);
    assert.equal(starknetHtlc.normalizeAddress(starknetChain('SN_SEPOLIA'), input), expected);
  }
});

test('splitU256 splits into 128-bit halves', () => {
  assert.deepEqual(splitU256(0n), { low: 0n, high: 0n });
  assert.deepEqual(splitU256(50_000n), { low: 50_000n, high: 0n });
  assert.deepEqual(splitU256(2n ** 128n - 1n), { low: 2n ** 128n - 1n, high: 0n });
  assert.deepEqual(splitU256(2n ** 128n), { low: 0n, high: 1n });
  assert.deepEqual(splitU256(2n ** 256n - 1n), { low: 2n ** 128n - 1n, high: 2n ** 128n - 1n });
  const v = 0x1234n * 2n ** 128n + 0x5678n;
  const { low, high } = splitU256(v);
  assert.equal(high * 2n ** 128n + low, v);
  assert.throws(() => splitU256(2n ** 256n), /amount: .* does not fit a u256/);
  assert.throws(() => splitU256(-1n), /does not fit a u256/);
});

test('secretHashWords gives eight big-endian u32 words', () => {
  assert.deepEqual(secretHashWords('00000001ffffffff' + '0'.repeat(47) + '1'), [1, 0xffffffff, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(secretHashWords('A0B1C2D3'.repeat(8)), Array<number>(8).fill(0xa0b1c2d3));
  assert.throws(() => secretHashWords('ab'), /secretHash: must be 64 hex characters/);
  assert.throws(() => secretHashWords(`0x${'a'.repeat(64)}`), /secretHash/);
  assert.throws(() => secretHashWords('g'.repeat(64)), /secretHash/);
});
