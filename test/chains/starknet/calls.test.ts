import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hash } from 'starknet';
import { SELECTORS, starknetHtlc, type StarknetCall } from '../../../src/chains/starknet/index.ts';
import { HTLC, REDEEMER, starknetChain, terms, TOKEN } from './fixtures.ts';

const WORDS_HEX = ['0xa0b1c2d3', '0xe4f50617', '0x28394a5b', '0x6c7d8e9f', '0x112233', '0x44556677', '0x8899aabb', '0xccddeeff'];
const minimal = (address: string): string => `0x${BigInt(address).toString(16)}`;

test('Starknet selectors are the starknet_keccak of the entry point names', () => {
  assert.equal(SELECTORS.approve, hash.getSelectorFromName('approve'));
  assert.equal(SELECTORS.initiate, hash.getSelectorFromName('initiate'));
  assert.match(SELECTORS.initiate, /^0x2aed25/); // as seen in Garden's live responses
});

test('Starknet source signing data: approve and initiate calls with u256 halves and u32 words', async () => {
  const amount = 2n ** 128n + 50_000n;
  const data = await starknetHtlc.sourceSigningData(terms({ amount }), { gasless: true });
  assert.deepEqual(Object.keys(data).sort(), ['approval_transaction', 'initiate_transaction', 'typed_data']);
  assert.deepEqual(data.approval_transaction, {
    to: TOKEN,
    selector: SELECTORS.approve,
    calldata: [minimal(HTLC), '0xc350', '0x1'],
  });
  assert.deepEqual(data.initiate_transaction, {
    to: HTLC,
    selector: SELECTORS.initiate,
    calldata: [minimal(REDEEMER), '0x3840', '0xc350', '0x1', ...WORDS_HEX],
  });
  const calldata = data.initiate_transaction.calldata;
  assert.equal(BigInt(calldata[2] ?? '') + (BigInt(calldata[3] ?? '') << 128n), amount);
  for (const felt of calldata) assert.match(felt, /^0x(0|[1-9a-f][0-9a-f]*)$/); // JSON-RPC FELT form
});

test('Starknet source signing data has typed_data null when the app is not gasless, calls unchanged', async () => {
  const gasless = await starknetHtlc.sourceSigningData(terms(), { gasless: true });
  const plain = await starknetHtlc.sourceSigningData(terms(), { gasless: false });
  assert.equal(plain.typed_data, null);
  assert.notEqual(gasless.typed_data, null);
  assert.deepEqual(plain.approval_transaction, gasless.approval_transaction);
  assert.deepEqual(plain.initiate_transaction, gasless.initiate_transaction);
});

test('Starknet source signing data normalizes addresses written without leading zeros', async () => {
  const short = REDEEMER.replace(/^0x0+/, '0x');
  const data = await starknetHtlc.sourceSigningData(terms({ redeemer: short }, starknetChain('SN_MAIN', HTLC)), { gasless: false });
  assert.equal((data.initiate_transaction as StarknetCall).calldata[0], minimal(REDEEMER));
});

test('Starknet source signing data refuses an asset without HTLC and bad terms', async () => {
  await assert.rejects(starknetHtlc.sourceSigningData(terms({}, starknetChain('SN_MAIN', '')), { gasless: false }), /starknet:wbtc: the asset has no HTLC address/);
  await assert.rejects(starknetHtlc.sourceSigningData(terms({ redeemer: 'bob' }), { gasless: false }), /redeemer: "bob" is not a Starknet address/);
  await assert.rejects(starknetHtlc.sourceSigningData(terms({ timelock: -1n }), { gasless: false }), /timelock: -1 does not fit a u128/);
  await assert.rejects(starknetHtlc.sourceSigningData(terms({ secretHash: 'zz' }), { gasless: false }), /secretHash/);
});
