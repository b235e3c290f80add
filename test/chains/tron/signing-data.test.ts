import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeFunctionData, erc20Abi, hashTypedData, recoverTypedDataAddress, toFunctionSelector, type TypedDataDefinition } from 'viem';
import { htlcInitiateAbi } from '../../../src/chains/solidity-htlc/htlc-abi.ts';
import { tronHtlc, tronToEvmHex, type TronInitiateTypedData, type TronTxRequest } from '../../../src/chains/tron/index.ts';
import { HTLC, INITIATOR, INITIATOR_ACCOUNT, REDEEMER, SECRET_HASH, terms, USDT } from './fixtures.ts';

/** The served typed data as viem's types want it: uint256 values as bigint instead of 0x hex. */
function asViem(td: TronInitiateTypedData) {
  return {
    ...td,
    domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
    message: { ...td.message, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
  };
}

async function signingData(gasless = true, overrides: Parameters<typeof terms>[0] = {}) {
  const data = await tronHtlc.sourceSigningData(terms(overrides), { gasless });
  return {
    typedData: data.typed_data as TronInitiateTypedData | null,
    approval: data.approval_transaction as TronTxRequest,
    initiate: data.initiate_transaction as TronTxRequest,
  };
}

test('Tron typed data is the HTLC v3 Initiate with EVM-form addresses, and the destination data TronRelay reads beside the signed fields', async () => {
  const { typedData } = await signingData();
  assert.deepEqual(typedData, {
    domain: { name: 'HTLC', version: '3', chainId: '0x2b6653dc', verifyingContract: tronToEvmHex(HTLC) },
    primaryType: 'Initiate',
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
      Initiate: [
        { name: 'redeemer', type: 'address' },
        { name: 'timelock', type: 'uint256' },
        { name: 'amount', type: 'uint256' },
        { name: 'secretHash', type: 'bytes32' },
      ],
    },
    message: { redeemer: tronToEvmHex(REDEEMER), timelock: '0x7080', amount: '0x17d7840', secretHash: `0x${SECRET_HASH}`, destinationData: '0x' },
  });
});

test('Tron typed data digest equals viem hashTypedData of the same values given as numbers', async () => {
  const { typedData } = await signingData();
  assert.ok(typedData);
  const expected = hashTypedData({
    domain: { name: 'HTLC', version: '3', chainId: 728126428, verifyingContract: '0x517591d35d313bf6a5e33098284502b045e2bc08' },
    primaryType: 'Initiate',
    types: { Initiate: typedData.types.Initiate },
    message: { redeemer: '0x775f057150b85086f456aac88fd52ba8e35db282', timelock: 28_800n, amount: 25_000_000n, secretHash: `0x${SECRET_HASH}` },
  });
  assert.equal(hashTypedData(asViem(typedData)), expected);
  // As served (JSON, numbers as 0x hex): viem's types ask for bigint, at run time it takes hex too.
  const served = JSON.parse(JSON.stringify(typedData)) as TypedDataDefinition;
  assert.equal(hashTypedData(served), expected);
});

test("a signature over the Tron typed data recovers the initiator's key", async () => {
  const { typedData } = await signingData();
  assert.ok(typedData);
  const signature = await INITIATOR_ACCOUNT.signTypedData(asViem(typedData));
  assert.equal(await recoverTypedDataAddress({ ...asViem(typedData), signature }), tronToEvmHex(INITIATOR));
});

test("Tron typed_data is served to apps that are not gasless too: Garden's TronRelay reads its message as its initiate's arguments", async () => {
  const gasless = await signingData(true);
  const plain = await signingData(false);
  assert.deepEqual(plain, gasless);
});

test("Tron approval is a TxRequest of TRC-20 approve(htlc, amount), the shape Garden's SDK reads", async () => {
  const { approval } = await signingData();
  assert.deepEqual(approval, {
    to: USDT.base58,
    value: '0',
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [tronToEvmHex(HTLC), 25_000_000n] }),
    gas_limit: '100000000',
    chain_id: 728126428,
  });
});

test('Tron initiate is a TxRequest of initiate(redeemer, timelock, amount, secretHash)', async () => {
  const { initiate } = await signingData();
  const calldata = encodeFunctionData({
    abi: htlcInitiateAbi,
    functionName: 'initiate',
    args: [tronToEvmHex(REDEEMER), 28_800n, 25_000_000n, `0x${SECRET_HASH}`],
  });
  assert.deepEqual(initiate, { to: HTLC, value: '0', data: calldata, gas_limit: '150000000', chain_id: 728126428 });
  assert.equal(initiate.data.slice(0, 10), toFunctionSelector('initiate(address,uint256,uint256,bytes32)'));
  assert.equal(initiate.data.slice(0, 10), '0x97ffc7ae');
});

test('Tron source signing data refuses bad terms', async () => {
  await assert.rejects(tronHtlc.sourceSigningData(terms({ redeemer: 'x' }), { gasless: true }), /redeemer: "x" is not a Tron address/);
  await assert.rejects(tronHtlc.sourceSigningData(terms({ amount: -1n }), { gasless: false }), /-1/);
  await assert.rejects(tronHtlc.sourceSigningData(terms({ secretHash: 'ab' }), { gasless: false }), /secretHash/);
});
