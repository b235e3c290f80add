import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeErrorResult, encodeDeployData, hashTypedData, zeroAddress, type Address, type Hex } from 'viem';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { CHAIN_ID, startChain, type Call, type Chain, type Role } from './setup.ts';

const ABI = contractArtifact('FeeClaim').abi;
const TOKEN_ABI = contractArtifact('TestToken').abi;

let c: Chain;
let feeClaim: Address;
let usdc: Address;
let wbtc: Address;

const call = (functionName: string, args: readonly unknown[]): Call => ({ address: feeClaim, abi: ABI, functionName, args });
const claimTypedData = (affiliate: Address, token: Address, cumulativeAmount: bigint, contract = feeClaim) =>
  ({
    domain: { name: 'FeeClaim', version: '1', chainId: CHAIN_ID, verifyingContract: contract },
    types: { Claim: [{ name: 'affiliate', type: 'address' }, { name: 'token', type: 'address' }, { name: 'cumulativeAmount', type: 'uint256' }] },
    primaryType: 'Claim',
    message: { affiliate, token, cumulativeAmount },
  }) as const;
const sign = (signer: Role, affiliate: Address, token: Address, cumulative: bigint, contract = feeClaim): Promise<Hex> =>
  c.account(signer).signTypedData(claimTypedData(affiliate, token, cumulative, contract));
const claimed = async (affiliate: Address, token: Address) =>
  (await c.client.readContract({ address: feeClaim, abi: ABI, functionName: 'claimed', args: [affiliate, token] })) as bigint;

before(async () => {
  c = await startChain();
  usdc = await c.deploy('TestToken', ['USD Coin (test)', 'USDC', 6, c.addr('deployer')]);
  wbtc = await c.deploy('TestToken', ['Wrapped Bitcoin (test)', 'WBTC', 8, c.addr('deployer')]);
  feeClaim = await c.deploy('FeeClaim', [c.addr('feeSigner'), c.addr('deployer')]);
  // The operator funds the contract with plain transfers.
  for (const token of [usdc, wbtc]) {
    await c.send('deployer', { address: token, abi: TOKEN_ABI, functionName: 'mint', args: [c.addr('deployer'), 10_000_000_000n] });
    await c.send('deployer', { address: token, abi: TOKEN_ABI, functionName: 'transfer', args: [feeClaim, 1_000_000_000n] });
  }
});

after(() => c?.stop());

test('TestToken: name, symbol, decimals as deployed; only the owner mints', async () => {
  const read = (address: Address, functionName: string) => c.client.readContract({ address, abi: TOKEN_ABI, functionName });
  assert.deepEqual([await read(usdc, 'name'), await read(usdc, 'symbol'), await read(usdc, 'decimals')], ['USD Coin (test)', 'USDC', 6]);
  assert.deepEqual([await read(wbtc, 'symbol'), await read(wbtc, 'decimals'), await read(wbtc, 'owner')], ['WBTC', 8, c.addr('deployer')]);
  await c.expectRevert('stranger', { address: usdc, abi: TOKEN_ABI, functionName: 'mint', args: [c.addr('stranger'), 1n] }, 'OwnableUnauthorizedAccount');
  await c.expectDeltas(c.tokenBalance(usdc), [['stranger', c.addr('stranger'), 5n]], () =>
    c.send('deployer', { address: usdc, abi: TOKEN_ABI, functionName: 'mint', args: [c.addr('stranger'), 5n] }),
  );
});

test('deploys with its signer and owner; zero signers are refused', async () => {
  const read = (functionName: string) => c.client.readContract({ address: feeClaim, abi: ABI, functionName });
  assert.deepEqual([await read('signer'), await read('owner')], [c.addr('feeSigner'), c.addr('deployer')]);
  const domain = (await read('eip712Domain')) as readonly unknown[];
  assert.deepEqual(domain.slice(1, 5), ['FeeClaim', '1', BigInt(CHAIN_ID), feeClaim]);
  await c.expectRevert('deployer', call('setSigner', [zeroAddress]), 'FeeClaim__ZeroAddressSigner');
  const { abi, bytecode } = contractArtifact('FeeClaim');
  // viem reads anvil's deployment revert as a reason string, so the raw JSON-RPC answer is decoded here.
  const res = await fetch(c.anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ from: c.addr('deployer'), data: encodeDeployData({ abi, bytecode, args: [zeroAddress, c.addr('deployer')] }) }, 'latest'] }),
  });
  const raw = ((await res.json()) as { error?: { data?: Hex } }).error?.data;
  assert.ok(raw, 'the deployment did not revert');
  assert.equal(decodeErrorResult({ abi, data: raw }).errorName, 'FeeClaim__ZeroAddressSigner');
});

test('claim pays the affiliate (whoever submits) the signed cumulative amount minus what it already claimed', async (t) => {
  const affiliate = c.addr('affiliate');
  const balance = c.tokenBalance(usdc);
  const first = await sign('feeSigner', affiliate, usdc, 1_500_000n);
  const receipt = await c.expectDeltas(
    balance,
    [['affiliate', affiliate, 1_500_000n], ['submitter', c.addr('stranger'), 0n], ['feeClaim', feeClaim, -1_500_000n]],
    () => c.send('stranger', call('claim', [affiliate, usdc, 1_500_000n, first])),
  );
  assert.deepEqual(c.events(receipt, ABI, feeClaim), [['Claimed', { affiliate, token: usdc, amount: 1_500_000n, cumulativeAmount: 1_500_000n }]]);
  assert.equal(await claimed(affiliate, usdc), 1_500_000n);
  assert.equal(await claimed(affiliate, wbtc), 0n); // per token
  t.diagnostic(`gas claim: ${receipt.gasUsed}`);

  await c.expectRevert('affiliate', call('claim', [affiliate, usdc, 1_500_000n, first]), 'FeeClaim__NothingToClaim'); // same cumulative again
  await c.expectRevert('affiliate', call('claim', [affiliate, usdc, 1_000_000n, await sign('feeSigner', affiliate, usdc, 1_000_000n)]), 'FeeClaim__NothingToClaim'); // older, smaller one

  const receipt2 = await c.expectDeltas(
    balance,
    [['affiliate', affiliate, 700_000n], ['feeClaim', feeClaim, -700_000n]],
    async () => c.send('affiliate', call('claim', [affiliate, usdc, 2_200_000n, await sign('feeSigner', affiliate, usdc, 2_200_000n)])),
  );
  assert.deepEqual(c.events(receipt2, ABI, feeClaim), [['Claimed', { affiliate, token: usdc, amount: 700_000n, cumulativeAmount: 2_200_000n }]]);
  assert.equal(await claimed(affiliate, usdc), 2_200_000n);
});

test('claim rejects other signers and any tampering with affiliate, token, amount or domain', async () => {
  const affiliate = c.addr('affiliate');
  const good = await sign('feeSigner', affiliate, wbtc, 5_000n);
  const cases: Array<[string, readonly unknown[]]> = [
    ['wrong signer', [affiliate, wbtc, 5_000n, await sign('stranger', affiliate, wbtc, 5_000n)]],
    ['amount tampered', [affiliate, wbtc, 5_001n, good]],
    ['affiliate swapped', [c.addr('stranger'), wbtc, 5_000n, good]],
    ['token swapped', [affiliate, usdc, 5_000n, good]],
    ['another contract', [affiliate, wbtc, 5_000n, await sign('feeSigner', affiliate, wbtc, 5_000n, usdc)]],
    ['empty', [affiliate, wbtc, 5_000n, '0x']],
  ];
  for (const [label, args] of cases) await c.expectRevert('stranger', call('claim', args), 'FeeClaim__InvalidSignature').catch((e: Error) => assert.fail(`${label}: ${e.message}`));
  const digest = hashTypedData(claimTypedData(affiliate, wbtc, 5_000n));
  assert.equal(await c.account('feeSigner').sign({ hash: digest }), good);
});

test('signer rotation: owner only, emits SignerChanged; the old signer stops working, totals carry over', async () => {
  const affiliate = c.addr('affiliate');
  await c.expectRevert('stranger', call('setSigner', [c.addr('stranger')]), 'OwnableUnauthorizedAccount');
  await c.expectRevert('feeSigner', call('setSigner', [c.addr('stranger')]), 'OwnableUnauthorizedAccount');
  const receipt = await c.send('deployer', call('setSigner', [c.addr('walletOwner')]));
  assert.deepEqual(c.events(receipt, ABI, feeClaim), [['SignerChanged', { previousSigner: c.addr('feeSigner'), newSigner: c.addr('walletOwner') }]]);

  const before = await claimed(affiliate, usdc);
  await c.expectRevert('affiliate', call('claim', [affiliate, usdc, before + 1n, await sign('feeSigner', affiliate, usdc, before + 1n)]), 'FeeClaim__InvalidSignature');
  await c.expectDeltas(c.tokenBalance(usdc), [['affiliate', affiliate, 1n], ['feeClaim', feeClaim, -1n]], async () =>
    c.send('affiliate', call('claim', [affiliate, usdc, before + 1n, await sign('walletOwner', affiliate, usdc, before + 1n)])),
  );
  await c.send('deployer', call('setSigner', [c.addr('feeSigner')]));
});

test('a claim beyond the funded balance reverts in the token and records nothing', async () => {
  const affiliate = c.addr('affiliate');
  const huge = 10n ** 18n;
  await c.expectRevert('affiliate', { ...call('claim', [affiliate, wbtc, huge, await sign('feeSigner', affiliate, wbtc, huge)]), abi: [...ABI, ...TOKEN_ABI] }, 'ERC20InsufficientBalance');
  assert.equal(await claimed(affiliate, wbtc), 0n);
});
