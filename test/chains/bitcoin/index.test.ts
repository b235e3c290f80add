import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HtlcTerms } from '../../../src/chains/family.ts';
import type { Asset, Chain } from '../../../src/chains/registry.ts';
import { bitcoinHtlc } from '../../../src/chains/bitcoin/index.ts';

function chainOn(network: string): Chain {
  const chain: Chain = {
    key: `${network}_chain`,
    name: network,
    id: 'bitcoin:1',
    family: 'bitcoin',
    network,
    nativeAssetId: `${network}_chain:btc`,
    icon: '',
    explorerUrl: '',
    blockTimeMs: 600_000,
    confirmationTarget: 1,
    sourceTimelock: 144,
    destinationTimelock: 12,
    isActive: true,
    assets: [],
    htlcSchemas: ['bitcoin:htlc'],
    tokenSchemas: ['bitcoin:native'],
  };
  const asset: Asset = {
    id: `${chain.key}:btc`,
    chain,
    symbol: 'BTC',
    name: 'Bitcoin',
    icon: '',
    decimals: 8,
    htlc: { address: '', schema: 'bitcoin:htlc' },
    token: { address: '', schema: 'bitcoin:native' },
    minAmount: 1n,
    maxAmount: 10n ** 8n,
    priceId: 'bitcoin',
    isActive: true,
    listedIn: new Set(['v2', 'v3']),
  };
  (chain.assets as Asset[]).push(asset);
  return chain;
}

// Garden's bitcoin_testnet order whose HTLC address htlc.test.ts checks as a known answer.
const terms = (network: string): HtlcTerms => ({
  asset: chainOn(network).assets[0]!,
  initiator: 'e39ec379ccddf417b54d68ed96aa580ad3177abeabe4f6da4b9fe092ad6bef6d',
  redeemer: '460f2e8ff81fc4e0a8e6ce7796704e3829e3e3eedb8db9390bdc51f4f04cf0a6',
  timelock: 144n,
  amount: 1_000_000n,
  secretHash: '2d8697807567bbbe9fa7e7a6f493d65d654f2937f60ba1d532cd8eab1f172bfe',
});
const TESTNET_HTLC = 'tb1pfkhvlk9307hycmua58waul6pl6ek7afsz5yxrll3w90vdyazglks5x8v89';

test("swapId is the HTLC address on the asset chain's network", () => {
  assert.equal(bitcoinHtlc.swapId(terms('bitcoin_testnet')), TESTNET_HTLC);
  assert.match(bitcoinHtlc.swapId(terms('litecoin')), /^ltc1p[a-z0-9]{58}$/);
});

test('sourceSigningData asks to pay the amount, in base units as a decimal string, to the HTLC', async () => {
  const data = await bitcoinHtlc.sourceSigningData(terms('bitcoin_testnet'), { gasless: false });
  assert.deepEqual(data, { to: TESTNET_HTLC, amount: '1000000' });
});

test('swapId refuses invalid terms', () => {
  assert.throws(() => bitcoinHtlc.swapId({ ...terms('bitcoin'), redeemer: '0x0000000000000000000000000000000000000001' }), /HTLC redeemer/);
  assert.throws(() => bitcoinHtlc.swapId({ ...terms('bitcoin'), timelock: 0n }), /HTLC timelock/);
});

test("normalizeAddress validates against the chain's network", () => {
  const bech32 = 'tb1qxtztdl8qn24axe7dnvp75xgcns6pl5ka9tzjru';
  assert.equal(bitcoinHtlc.normalizeAddress(chainOn('bitcoin_testnet'), bech32.toUpperCase()), bech32);
  assert.equal(bitcoinHtlc.normalizeAddress(chainOn('bitcoin_regtest'), bech32), undefined);
  assert.equal(bitcoinHtlc.normalizeAddress(chainOn('litecoin_testnet'), bech32), undefined);
  assert.equal(bitcoinHtlc.normalizeAddress(chainOn('litecoin_testnet'), 'QhSWVppS12Fqv6dh3rAyoB18jXh5mB1hoC'), 'QhSWVppS12Fqv6dh3rAyoB18jXh5mB1hoC');
});
