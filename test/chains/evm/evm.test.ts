import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  concat,
  encodeAbiParameters,
  hashTypedData,
  hexToBigInt,
  keccak256,
  recoverTypedDataAddress,
  toHex,
  type Address,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmHtlc, normalizeEvmAddress } from '../../../src/chains/evm/index.ts';
import { evmOrderId, type EvmOrderTerms } from '../../../src/chains/evm/order-id.ts';
import { initiateTypedData, initiateTypedDataJson } from '../../../src/chains/solidity-htlc/typed-data.ts';
import { localnetRegistry, SOLVER, USER } from '../../helpers/fixtures.ts';

const HTLC: Address = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0';
const terms: EvmOrderTerms = {
  chainId: 31337n,
  secretHash: `0x${'11'.repeat(32)}`,
  initiator: USER,
  redeemer: SOLVER.addresses.ethereum_localnet as Address,
  timelock: 600n,
  amount: 100000n,
  htlc: HTLC,
};

test('the EVM order id matches a vector computed independently (Python hashlib over the raw ABI words)', () => {
  // python3: sha256(w(31337) + 0x11*32 + pad(initiator) + pad(redeemer) + w(600) + w(100000) + pad(htlc))
  assert.equal(evmOrderId(terms), '0xd65ffe21b9e7cdff5ec070ff14d824ace47229219bdbc261e29325e7226d14c3');
});

test('the EVM order id changes with every input', () => {
  const base = evmOrderId(terms);
  const variants: Array<Partial<EvmOrderTerms>> = [
    { chainId: 31338n },
    { secretHash: `0x${'12'.repeat(32)}` as const },
    { initiator: SOLVER.addresses.ethereum_localnet as Address, redeemer: USER },
    { timelock: 601n },
    { amount: 100001n },
    { htlc: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9' },
  ];
  for (const v of variants) assert.notEqual(evmOrderId({ ...terms, ...v }), base, JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)));
});

test("the Initiate digest equals viem's hashTypedData and a by-hand EIP-712 encoding of the contract's types", () => {
  const viemDigest = hashTypedData(initiateTypedData(terms));
  const domainTypeHash = keccak256(toHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'));
  const domainSeparator = keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
      [domainTypeHash, keccak256(toHex('HTLC')), keccak256(toHex('3')), 31337n, HTLC],
    ),
  );
  const initiateTypeHash = keccak256(toHex('Initiate(address redeemer,uint256 timelock,uint256 amount,bytes32 secretHash)'));
  const structHash = keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes32' }],
      [initiateTypeHash, terms.redeemer, 600n, 100000n, terms.secretHash],
    ),
  );
  assert.equal(viemDigest, keccak256(concat(['0x1901', domainSeparator, structHash])));
});

test('the API typed data (hex quantities) hashes the same, and a wallet signature over it recovers the signer', async () => {
  const json = initiateTypedDataJson(terms);
  assert.deepEqual(json.message, { redeemer: terms.redeemer, timelock: '0x258', amount: '0x186a0', secretHash: terms.secretHash });
  assert.equal(json.domain.chainId, '0x7a69');
  const asViem = {
    domain: { ...json.domain, chainId: hexToBigInt(json.domain.chainId) },
    types: { Initiate: json.types.Initiate },
    primaryType: json.primaryType,
    message: { ...json.message, timelock: hexToBigInt(json.message.timelock), amount: hexToBigInt(json.message.amount) },
  };
  assert.equal(hashTypedData(asViem), hashTypedData(initiateTypedData(terms)));
  const user = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6'); // anvil account 3
  const signature = await user.signTypedData(initiateTypedData(terms));
  assert.equal(await recoverTypedDataAddress({ ...initiateTypedData(terms), signature }), user.address);
});

test('EVM addresses: checksum enforced when mixed case, normalized to EIP-55', () => {
  const cases: Array<[string, string | undefined]> = [
    ['0x90F79bf6EB2c4f870365E785982E1f101E93b906', '0x90F79bf6EB2c4f870365E785982E1f101E93b906'],
    ['0x90f79bf6eb2c4f870365e785982e1f101e93b906', '0x90F79bf6EB2c4f870365E785982E1f101E93b906'],
    ['0x90F79BF6EB2C4F870365E785982E1F101E93B906', undefined], // upper case is read as a (wrong) checksum
    ['0x90F79bf6EB2c4f870365E785982E1f101E93B906', undefined], // one letter's case flipped
    ['90F79bf6EB2c4f870365E785982E1f101E93b906', undefined],
    ['0x90F79bf6EB2c4f870365E785982E1f101E93b9', undefined],
    ['0x90F79bf6EB2c4f870365E785982E1f101E93b9066', undefined],
    ['0xZZF79bf6EB2c4f870365E785982E1f101E93b906', undefined],
    ['', undefined],
  ];
  for (const [input, expected] of cases) assert.equal(normalizeEvmAddress(input), expected, input);
});

test('create-order signing data: typed data only for gasless ERC-20, approval only for ERC-20', async () => {
  const registry = localnetRegistry();
  const wbtc = registry.asset('ethereum_localnet:wbtc')!;
  const eth = registry.asset('ethereum_localnet:eth')!;
  const htlcTerms = { asset: wbtc, initiator: USER, redeemer: SOLVER.addresses.ethereum_localnet!, timelock: 600n, amount: 100000n, secretHash: '11'.repeat(32) };
  assert.equal(evmHtlc.swapId(htlcTerms), evmOrderId(terms).slice(2));

  const gasless = await evmHtlc.sourceSigningData(htlcTerms, { gasless: true });
  assert.deepEqual(gasless.typed_data, initiateTypedDataJson(terms));
  assert.equal((gasless.approval_transaction as { to: string }).to, wbtc.token.address);
  assert.equal((gasless.initiate_transaction as { to: string }).to, HTLC);
  assert.equal(gasless.amount, '100000');

  assert.equal((await evmHtlc.sourceSigningData(htlcTerms, { gasless: false })).typed_data, null);
  const native = await evmHtlc.sourceSigningData({ ...htlcTerms, asset: eth }, { gasless: true });
  assert.equal(native.typed_data, null);
  assert.equal(native.approval_transaction, null);
  assert.equal((native.initiate_transaction as { value: string }).value, '0x186a0');
});
