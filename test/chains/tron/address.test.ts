import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256 } from '@noble/hashes/sha2.js';
import { base58, createBase58check } from '@scure/base';
import { getAddress, hexToBytes } from 'viem';
import { evmHexToTron, normalizeTronAddress, tronHtlc, tronToEvmHex } from '../../../src/chains/tron/index.ts';
import { PAIRS, tronChain, USDT } from './fixtures.ts';

const check = createBase58check(sha256);
/** base58 of payload + a checksum computed here: the first 4 bytes of sha256(sha256(payload)). */
const encodeByHand = (payload: Uint8Array): string => base58.encode(Uint8Array.of(...payload, ...sha256(sha256(payload)).subarray(0, 4)));

test('the USDT contract address converts between base58, 41-hex and EVM hex', () => {
  assert.equal(normalizeTronAddress(USDT.base58), USDT.base58);
  assert.equal(normalizeTronAddress(USDT.hex41), USDT.base58);
  assert.equal(normalizeTronAddress(USDT.hex41.toUpperCase()), USDT.base58);
  assert.equal(tronToEvmHex(USDT.base58), getAddress('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c'));
  assert.equal(tronToEvmHex(USDT.hex41), tronToEvmHex(USDT.base58));
  assert.equal(evmHexToTron('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c'), USDT.base58);
  assert.equal(evmHexToTron(getAddress('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c')), USDT.base58);
});

for (const { base58: b58, hex41 } of PAIRS) {
  test(`Tron address ${b58} round-trips and matches a checksum computed by hand`, () => {
    assert.equal(encodeByHand(hexToBytes(`0x${hex41}`)), b58);
    assert.equal(tronHtlc.normalizeAddress(tronChain(), hex41), b58);
    assert.equal(evmHexToTron(tronToEvmHex(b58)), b58);
    assert.equal(tronToEvmHex(b58).toLowerCase(), `0x${hex41.slice(2)}`);
  });
}

const payload = hexToBytes(`0x${USDT.hex41}`);
const withVersion = (version: number): Uint8Array => Uint8Array.of(version, ...payload.subarray(1));
const flipLast = (s: string): string => s.slice(0, -1) + (s.endsWith('t') ? 'u' : 't');

const refused: Array<[string, string]> = [
  ['a wrong checksum', flipLast(USDT.base58)],
  ['a checksum over single sha256', base58.encode(Uint8Array.of(...payload, ...sha256(payload).subarray(0, 4)))],
  ['version byte 0x42', check.encode(withVersion(0x42))],
  ['version byte 0x00 (a Bitcoin-style address)', check.encode(withVersion(0x00))],
  ['a 20-byte payload', check.encode(payload.subarray(1))],
  ['a 22-byte payload', check.encode(Uint8Array.of(...payload, 0))],
  ['41-hex one digit short', USDT.hex41.slice(0, -1)],
  ['41-hex one digit long', `${USDT.hex41}0`],
  ['hex with another prefix', `42${USDT.hex41.slice(2)}`],
  ['0x-prefixed 41-hex', `0x${USDT.hex41}`],
  ['an EVM address', '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c'],
  ['characters outside base58', USDT.base58.replace('q', '0')],
  ['lower-cased base58', USDT.base58.toLowerCase()],
  ['an empty string', ''],
  ['surrounding spaces', ` ${USDT.base58} `],
];

for (const [name, input] of refused) {
  test(`Tron normalizeAddress refuses ${name}`, () => {
    assert.equal(tronHtlc.normalizeAddress(tronChain(), input), undefined);
  });
}

test('Tron address helpers throw on bad input', () => {
  assert.throws(() => tronToEvmHex(flipLast(USDT.base58)), /is not a Tron address/);
  assert.throws(() => evmHexToTron('0xA614f803b6fd780986a42c78ec9c7f77e6ded13c'), /is not a 20-byte EVM address/); // bad EIP-55
  assert.throws(() => evmHexToTron(USDT.hex41), /is not a 20-byte EVM address/);
});
