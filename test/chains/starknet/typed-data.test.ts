import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ec, encode, hash, shortString, typedData, TypedDataRevision } from 'starknet';
import { starknetHtlc } from '../../../src/chains/starknet/index.ts';
import { initiateTypedData, type InitiateTypedData } from '../../../src/chains/starknet/typed-data.ts';
import { INITIATOR, REDEEMER, SECRET_HASH, starknetChain, terms } from './fixtures.ts';

const poseidon = (elements: Array<bigint | string | number>): bigint => BigInt(hash.computePoseidonHashOnElements(elements));
const ss = (s: string): bigint => BigInt(shortString.encodeShortString(s));

// The type strings exactly as Garden's Cairo HTLC spells them (selector!(...) = starknet_keccak).
const DOMAIN_TYPE = '"StarknetDomain"("name":"shortstring","version":"shortstring","chainId":"shortstring","revision":"shortstring")';
const INITIATE_TYPE = '"Initiate"("redeemer":"ContractAddress","amount":"u256","timelock":"u128","secretHash":"u128*")"u256"("low":"u128","high":"u128")';
const U256_TYPE = '"u256"("low":"u128","high":"u128")';

/** The message hash as the Cairo contract computes it (struct_hash.cairo), from first principles. */
function cairoMessageHash(input: { network: string; signer: string; redeemer: string; amount: bigint; timelock: bigint; words: number[] }): bigint {
  const domain = poseidon([hash.starknetKeccak(DOMAIN_TYPE), ss('HTLC'), ss('1'), ss(input.network), 1n]);
  const u256 = poseidon([hash.starknetKeccak(U256_TYPE), input.amount & (2n ** 128n - 1n), input.amount >> 128n]);
  const initiate = poseidon([hash.starknetKeccak(INITIATE_TYPE), input.redeemer, u256, input.timelock, poseidon(input.words)]);
  return poseidon([ss('StarkNet Message'), domain, input.signer, initiate]);
}

const WORDS = [0xa0b1c2d3, 0xe4f50617, 0x28394a5b, 0x6c7d8e9f, 0x00112233, 0x44556677, 0x8899aabb, 0xccddeeff];

async function servedTypedData(overrides: Parameters<typeof terms>[0] = {}, network = 'SN_MAIN'): Promise<InitiateTypedData> {
  const data = await starknetHtlc.sourceSigningData(terms(overrides, starknetChain(network)), { gasless: true });
  return data.typed_data as InitiateTypedData;
}

test('Starknet typed data has the SNIP-12 shape Garden serves', async () => {
  const td = await servedTypedData();
  assert.deepEqual(td.domain, { name: 'HTLC', version: '0x31', chainId: 'SN_MAIN', revision: '1' });
  assert.equal(td.primaryType, 'Initiate');
  assert.deepEqual(Object.keys(td.types), ['StarknetDomain', 'Initiate']);
  assert.deepEqual(td.message, {
    redeemer: BigInt(REDEEMER).toString(10),
    amount: { low: '0xc350', high: '0x0' },
    timelock: '14400',
    secretHash: WORDS,
  });
  assert.equal(typedData.encodeType(td.types, 'Initiate', TypedDataRevision.ACTIVE), INITIATE_TYPE);
  assert.equal(typedData.encodeType(td.types, 'StarknetDomain', TypedDataRevision.ACTIVE), DOMAIN_TYPE);
});

for (const network of ['SN_MAIN', 'SN_SEPOLIA']) {
  test(`Starknet typed data message hash (${network}) equals the contract's computation`, async () => {
    const td = await servedTypedData({}, network);
    const expected = cairoMessageHash({ network, signer: INITIATOR, redeemer: REDEEMER, amount: 50_000n, timelock: 14_400n, words: WORDS });
    assert.equal(BigInt(typedData.getMessageHash(td, INITIATOR)), expected);
  });
}

test('Starknet typed data message hash equals the SNIP-12 pieces combined by hand', async () => {
  const td = await servedTypedData({ amount: 2n ** 130n + 7n });
  const rev = TypedDataRevision.ACTIVE;
  const domainHash = typedData.getStructHash(td.types, 'StarknetDomain', td.domain, rev);
  const structHash = typedData.getStructHash(td.types, 'Initiate', td.message, rev);
  const byHand = poseidon([ss('StarkNet Message'), domainHash, INITIATOR, structHash]);
  assert.equal(BigInt(typedData.getMessageHash(td, INITIATOR)), byHand);
  assert.deepEqual(td.message.amount, { low: '0x7', high: '0x4' });
  const expected = cairoMessageHash({ network: 'SN_MAIN', signer: INITIATOR, redeemer: REDEEMER, amount: 2n ** 130n + 7n, timelock: 14_400n, words: WORDS });
  assert.equal(byHand, expected);
});

test('Starknet typed data survives JSON and binds signer, amount, timelock, redeemer and secret hash', async () => {
  const td = await servedTypedData();
  const base = typedData.getMessageHash(td, INITIATOR);
  assert.equal(typedData.getMessageHash(JSON.parse(JSON.stringify(td)) as InitiateTypedData, INITIATOR), base);
  const others = [
    typedData.getMessageHash(td, REDEEMER),
    typedData.getMessageHash(await servedTypedData({ amount: 50_001n }), INITIATOR),
    typedData.getMessageHash(await servedTypedData({ timelock: 14_401n }), INITIATOR),
    typedData.getMessageHash(await servedTypedData({ redeemer: INITIATOR }), INITIATOR),
    typedData.getMessageHash(await servedTypedData({ secretHash: SECRET_HASH.replace(/f$/, 'e') }), INITIATOR),
    typedData.getMessageHash(await servedTypedData({}, 'SN_SEPOLIA'), INITIATOR),
  ];
  assert.equal(new Set([base, ...others]).size, others.length + 1);
});

test('a Stark-curve signature over the typed data verifies with starknet.js', async () => {
  const td = await servedTypedData();
  const privateKey = `0x${encode.buf2hex(ec.starkCurve.utils.randomPrivateKey())}`;
  const fullPublicKey = encode.addHexPrefix(encode.buf2hex(ec.starkCurve.getPublicKey(privateKey, false)));
  const signature = ec.starkCurve.sign(typedData.getMessageHash(td, INITIATOR), privateKey);
  assert.equal(typedData.verifyMessage(td, signature, fullPublicKey, INITIATOR), true);
  assert.equal(typedData.verifyMessage(td, signature, fullPublicKey, REDEEMER), false);
});

test('initiateTypedData refuses values the contract types cannot hold', () => {
  const input = { network: 'SN_MAIN', redeemer: REDEEMER, amount: 1n, timelock: 1n, secretHash: SECRET_HASH };
  assert.throws(() => initiateTypedData({ ...input, timelock: 2n ** 128n }), /timelock: .* does not fit a u128/);
  assert.throws(() => initiateTypedData({ ...input, amount: 2n ** 256n }), /amount: .* does not fit a u256/);
  assert.throws(() => initiateTypedData({ ...input, redeemer: '0x0' }), /redeemer: .* is not a Starknet address/);
});
