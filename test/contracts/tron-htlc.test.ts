// The Tron HTLC on anvil with chain id 5023093724: wider than 32 bits, low 32 bits = Tron mainnet's
// 728126428, so a domain or an order id that forgets TIP-712's `& 0xffffffff` fails here.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { encodeFunctionData, hashTypedData, toFunctionSelector, zeroAddress, type Address, type Hex } from 'viem';
import { initiateTypedData } from '../../src/chains/solidity-htlc/typed-data.ts';
import { evmHexToTron, tronOrderId } from '../../src/chains/tron/index.ts';
import { tronContractArtifact } from '../../src/localnet/tron/contracts.ts';
import { mockArtifacts, fundTokenHolders, htlcTerms, newSecret, readHtlcOrder, startChain, type Call, type Chain, type HtlcTerms, type Role } from './setup.ts';

const ANVIL_CHAIN_ID = 5023093724;
const TRON_CHAIN_ID = 728126428n; // ANVIL_CHAIN_ID & 0xffffffff
const HTLC_ABI = tronContractArtifact('TronHTLC').abi;
const TOKEN_ABI = tronContractArtifact('TestToken').abi;
const AMOUNT = 25_000_000n; // 25 USDT (6 decimals)
const TIMELOCK = 10n;

let c: Chain;
let token: Address;
let htlc: Address;
let balance: (a: Address) => Promise<bigint>;

const call = (functionName: string, args: readonly unknown[]): Call => ({ address: htlc, abi: HTLC_ABI, functionName, args });
const tokenCall = (functionName: string, args: readonly unknown[]): Call => ({ address: token, abi: TOKEN_ABI, functionName, args });
type Terms = HtlcTerms;
const terms = (over: Partial<Terms> = {}): Terms => htlcTerms(c, { amount: AMOUNT, timelock: TIMELOCK }, over);
/** The service's Tron order id (base58 addresses, the registry's chain id). */
const orderId = (t: Terms): Hex =>
  `0x${tronOrderId({
    chainId: `tron:${TRON_CHAIN_ID}`,
    secretHash: t.secretHash.slice(2),
    initiator: evmHexToTron(t.initiator),
    redeemer: evmHexToTron(t.redeemer),
    timelock: t.timelock,
    amount: t.amount,
    htlc: evmHexToTron(htlc),
  })}`;
const withSignature = (t: Terms, signature: Hex) => call('initiateWithSignature', [t.initiator, t.redeemer, t.timelock, t.amount, t.secretHash, signature]);
const signInitiate = (signer: Role, t: Terms, chainId = TRON_CHAIN_ID) => c.account(signer).signTypedData(initiateTypedData({ chainId, htlc, ...t }));
const refundTypedData = (id: Hex, chainId = TRON_CHAIN_ID) =>
  ({
    domain: { name: 'HTLC', version: '3', chainId, verifyingContract: htlc },
    types: { Refund: [{ name: 'orderId', type: 'bytes32' }] },
    primaryType: 'Refund',
    message: { orderId: id },
  }) as const;
const readOrder = (id: Hex) => readHtlcOrder(c, htlc, HTLC_ABI, id);
const open = async (t: Terms) => (await c.send('initiator', call('initiate', [t.redeemer, t.timelock, t.amount, t.secretHash]))).blockNumber;

/** The opcodes of runtime code, push data skipped, the trailing CBOR metadata left out. */
function opcodes(code: Hex): number[] {
  const bytes = Buffer.from(code.slice(2), 'hex');
  const end = bytes.length - 2 - bytes.readUInt16BE(bytes.length - 2);
  const ops: number[] = [];
  for (let i = 0; i < end; i++) {
    const op = bytes[i]!;
    ops.push(op);
    if (op >= 0x60 && op <= 0x7f) i += op - 0x5f;
  }
  return ops;
}

before(async () => {
  c = await startChain(ANVIL_CHAIN_ID);
  token = await c.deploy(tronContractArtifact('TestToken'), ['Tether USD (test)', 'USDT', 6, c.addr('deployer')]);
  htlc = await c.deploy(tronContractArtifact('TronHTLC'), [token]);
  balance = c.tokenBalance(token);
  await fundTokenHolders(c, token, TOKEN_ABI, htlc, AMOUNT);
});

after(() => c?.stop());

test('compiled for the TVM: no PUSH0, MCOPY, TLOAD or TSTORE in the runtime code of either contract', () => {
  for (const [name, artifact] of (['TronHTLC', 'TestToken'] as const).map((n) => [n, tronContractArtifact(n)] as const)) {
    const used = new Set(opcodes(artifact.deployedBytecode));
    assert.ok(used.has(0x60) && used.has(0x55), `${name}: the opcode walk finds PUSH1 and SSTORE`);
    for (const [op, mnemonic] of [[0x5f, 'PUSH0'], [0x5e, 'MCOPY'], [0x5c, 'TLOAD'], [0x5d, 'TSTORE']] as const) {
      assert.ok(!used.has(op), `${name} uses ${mnemonic}`);
    }
  }
});

test("the TIP-712 domain carries block.chainid & 0xffffffff; Garden's selectors", async () => {
  assert.equal(await c.client.getChainId(), ANVIL_CHAIN_ID);
  const domain = (await c.client.readContract({ address: htlc, abi: HTLC_ABI, functionName: 'eip712Domain' })) as readonly unknown[];
  assert.deepEqual(domain.slice(0, 5), ['0x0f', 'HTLC', '3', TRON_CHAIN_ID, htlc]);
  const functions = HTLC_ABI.filter((x) => x.type === 'function').map((x) => toFunctionSelector(x));
  for (const signature of [
    'initiate(address,uint256,uint256,bytes32)', // 0x97ffc7ae, as Garden's EVM initiate_transaction
    'initiate(address,uint256,uint256,bytes32,bytes)', // what Garden's TronRelay calls
    'initiateOnBehalf(address,address,uint256,uint256,bytes32)',
    'initiateWithSignature(address,address,uint256,uint256,bytes32,bytes)',
    'redeem(bytes32,bytes)',
    'refund(bytes32)',
    'instantRefund(bytes32,bytes)',
  ]) assert.ok(functions.includes(toFunctionSelector(signature)), signature);
  assert.equal(toFunctionSelector('initiate(address,uint256,uint256,bytes32)'), '0x97ffc7ae');
  const garden: Record<string, Hex> = { ZeroAddressRedeemer: '0x32a4beb3', OrderNotInitiated: '0xca1eac12', OrderFulfilled: '0x356b842c', IncorrectSecret: '0x3dbd7ab4', OrderNotExpired: '0x839f009c', DuplicateOrder: '0x90c06174', InvalidRedeemerSignature: '0xb41ed7a7', InvalidInitiatorSignature: '0x3b3fd9ae' };
  for (const [name, selector] of Object.entries(garden)) assert.equal(toFunctionSelector(`HTLC__${name}()`), selector, name);
});

test("initiate with destination data: stored under the service's tronOrderId, both events, exactly amount moves", async () => {
  const o = terms();
  const id = orderId(o);
  const destinationData = '0xc0ffee';
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, -AMOUNT], ['redeemer', o.redeemer, 0n], ['htlc', htlc, AMOUNT]],
    () => c.send('initiator', call('initiate', [o.redeemer, o.timelock, o.amount, o.secretHash, destinationData])),
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [
    ['Initiated', { orderID: id, secretHash: o.secretHash, amount: AMOUNT }],
    ['InitiatedWithDestinationData', { orderID: id, secretHash: o.secretHash, amount: AMOUNT, destinationData }],
  ]);
  assert.deepEqual(await readOrder(id), [o.initiator, o.redeemer, receipt.blockNumber, TIMELOCK, AMOUNT, 0n]);
  await c.expectRevert('initiator', call('initiate', [o.redeemer, o.timelock, o.amount, o.secretHash, '0x']), 'HTLC__DuplicateOrder');
  await c.expectRevert('initiator', call('initiate', [zeroAddress, o.timelock, o.amount, o.secretHash, '0x']), 'HTLC__ZeroAddressRedeemer');
  await c.expectRevert('relayer', call('initiateOnBehalf', [o.initiator, o.redeemer, o.timelock, o.amount, o.secretHash]), 'HTLC__DuplicateOrder');
});

test('initiateWithSignature: a TIP-712 signature over the masked chain id is accepted; one over the unmasked chain id, a replay or a tampered one is not', async (t) => {
  const o = terms();
  const unmasked = await signInitiate('initiator', o, BigInt(ANVIL_CHAIN_ID));
  await c.expectRevert('relayer', withSignature(o, unmasked), 'HTLC__InvalidInitiatorSignature');
  const signature = await signInitiate('initiator', o);
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, -AMOUNT], ['relayer', c.addr('relayer'), 0n], ['htlc', htlc, AMOUNT]],
    () => c.send('relayer', withSignature(o, signature)),
  );
  assert.deepEqual((await readOrder(orderId(o))).slice(0, 2), [o.initiator, o.redeemer]);
  t.diagnostic(`gas initiateWithSignature: ${receipt.gasUsed}`);
  await c.expectRevert('relayer', withSignature(o, signature), 'HTLC__DuplicateOrder');
  const fresh = terms();
  await c.expectRevert('relayer', withSignature({ ...fresh, amount: AMOUNT + 1n }, await signInitiate('initiator', fresh)), 'HTLC__InvalidInitiatorSignature');
  await c.expectRevert('relayer', withSignature(fresh, await signInitiate('stranger', fresh)), 'HTLC__InvalidInitiatorSignature');
  await c.expectRevert('relayer', withSignature(fresh, `0x${'ab'.repeat(65)}`), 'HTLC__InvalidInitiatorSignature');
});

test('redeem pays the redeemer against the secret, once; a wrong secret is refused', async () => {
  const o = terms();
  const id = orderId(o);
  await open(o);
  await c.expectRevert('stranger', call('redeem', [id, newSecret().secret]), 'HTLC__IncorrectSecret');
  await c.expectRevert('stranger', call('redeem', [id, o.secretHash.slice(0, 64)]), 'HTLC__InvalidSecretLength');
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, 0n], ['redeemer', o.redeemer, AMOUNT], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('redeem', [id, o.secret])),
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Redeemed', { orderID: id, secretHash: o.secretHash, secret: o.secret }]]);
  await c.expectRevert('stranger', call('redeem', [id, o.secret]), 'HTLC__OrderFulfilled');
});

test('refund only from block initiatedAt + timelock + 1, to the initiator', async () => {
  const o = terms({ timelock: 3n });
  const id = orderId(o);
  const initiatedAt = await open(o);
  await c.mineTo(initiatedAt + o.timelock - 1n);
  await c.expectRevert('stranger', call('refund', [id]), 'HTLC__OrderNotExpired'); // pending block initiatedAt + timelock
  await c.mineTo(initiatedAt + o.timelock);
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, AMOUNT], ['redeemer', o.redeemer, 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('refund', [id])),
  );
  assert.equal(receipt.blockNumber, initiatedAt + o.timelock + 1n);
  await c.expectRevert('stranger', call('redeem', [id, o.secret]), 'HTLC__OrderFulfilled');
});

test("instantRefund: the redeemer's TIP-712 Refund(orderId) over the masked chain id; the unmasked one is refused", async () => {
  const o = terms();
  const id = orderId(o);
  await open(o);
  const digest = await c.client.readContract({ address: htlc, abi: HTLC_ABI, functionName: 'instantRefundDigest', args: [id] });
  assert.equal(digest, hashTypedData(refundTypedData(id)));
  await c.expectRevert('stranger', call('instantRefund', [id, await c.account('redeemer').signTypedData(refundTypedData(id, BigInt(ANVIL_CHAIN_ID)))]), 'HTLC__InvalidRedeemerSignature');
  await c.expectRevert('stranger', call('instantRefund', [id, await c.account('initiator').signTypedData(refundTypedData(id))]), 'HTLC__InvalidRedeemerSignature');
  await c.expectDeltas(
    balance,
    [['initiator', o.initiator, AMOUNT], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    async () => c.send('stranger', call('instantRefund', [id, await c.account('redeemer').signTypedData(refundTypedData(id))])),
  );
  const byRedeemer = terms();
  await open(byRedeemer);
  await c.expectDeltas(balance, [['initiator', byRedeemer.initiator, AMOUNT]], () => c.send('redeemer', call('instantRefund', [orderId(byRedeemer), '0x'])));
});

test('ERC-1271: a smart-wallet initiator signs through its owner', async () => {
  const { SmartWallet } = mockArtifacts();
  const sw = await c.deploy(SmartWallet!, [c.addr('walletOwner')]);
  await c.send('deployer', tokenCall('mint', [sw, AMOUNT]));
  await c.send('walletOwner', { address: sw, abi: SmartWallet!.abi, functionName: 'execute', args: [token, encodeFunctionData({ abi: TOKEN_ABI, functionName: 'approve', args: [htlc, AMOUNT] })] });
  const o = terms({ initiator: sw });
  await c.expectRevert('relayer', withSignature(o, await signInitiate('stranger', o)), 'HTLC__InvalidInitiatorSignature');
  await c.expectDeltas(balance, [['wallet', sw, -AMOUNT], ['htlc', htlc, AMOUNT]], async () => c.send('relayer', withSignature(o, await signInitiate('walletOwner', o))));
});
