import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NETWORKS } from '../../../src/chains/registry.ts';
import { BITCOIN_NETWORK_NAMES, bitcoinNetwork } from '../../../src/chains/bitcoin/network.ts';

// Chain parameters as Bitcoin Core and Litecoin Core define them (chainparams.cpp).
const expected: Array<[string, { bech32: string; pubKeyHash: number; scriptHash: number; wif: number }]> = [
  ['bitcoin', { bech32: 'bc', pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 }],
  ['bitcoin_testnet', { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }],
  ['bitcoin_regtest', { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }],
  ['litecoin', { bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 }],
  ['litecoin_testnet', { bech32: 'tltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef }],
  ['litecoin_regtest', { bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef }],
];

for (const [name, params] of expected) {
  test(`bitcoinNetwork(${name}) has the chain's address and key prefixes`, () => {
    assert.deepEqual({ ...bitcoinNetwork(name) }, params);
  });
}

test('the bitcoin-family networks are exactly those the registry allows', () => {
  assert.deepEqual([...BITCOIN_NETWORK_NAMES].sort(), [...(NETWORKS.bitcoin ?? [])].sort());
});

for (const name of ['', 'Bitcoin', 'testnet', 'dogecoin', 'toString', '__proto__', 'hasOwnProperty']) {
  test(`bitcoinNetwork(${JSON.stringify(name)}) throws`, () => {
    assert.throws(() => bitcoinNetwork(name), /unknown bitcoin-family network/);
  });
}
