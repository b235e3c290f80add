import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { encodeFunctionData, hashTypedData, parseEther, zeroAddress, type Address, type Hex } from 'viem';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { evmOrderId } from '../../src/chains/evm/order-id.ts';
import { CHAIN_ID, mockArtifacts, htlcTerms, newSecret, readHtlcOrder, startChain, type Call, type Chain, type Deployable, type HtlcTerms, type Role } from './setup.ts';

const ABI = contractArtifact('NativeHTLC').abi;
const AMOUNT = parseEther('1.25');
const TIMELOCK = 10n;

let c: Chain;
let htlc: Address;
let Reenterer: Deployable;

const call = (functionName: string, args: readonly unknown[], value?: bigint): Call => ({ address: htlc, abi: ABI, functionName, args, value });
type Terms = HtlcTerms;
const terms = (over: Partial<Terms> = {}): Terms => htlcTerms(c, { amount: AMOUNT, timelock: TIMELOCK }, over);
const orderId = (t: Terms): Hex => evmOrderId({ chainId: BigInt(CHAIN_ID), htlc, ...t });
const initiate = (t: Terms, value = t.amount) => call('initiate', [t.redeemer, t.timelock, t.amount, t.secretHash], value);
const onBehalf = (t: Terms, value = t.amount) => call('initiateOnBehalf', [t.initiator, t.redeemer, t.timelock, t.amount, t.secretHash], value);
const readOrder = (id: Hex) => readHtlcOrder(c, htlc, ABI, id);
const native = { native: true };

before(async () => {
  c = await startChain();
  htlc = await c.deploy('NativeHTLC', []);
  Reenterer = mockArtifacts().Reenterer!;
});

after(() => c?.stop());

test('has no initiateWithSignature (ether cannot be pulled from a signer) and rejects plain ether transfers', async () => {
  assert.ok(!ABI.some((x) => x.type === 'function' && x.name === 'initiateWithSignature'));
  await assert.rejects(c.wallet('stranger').sendTransaction({ to: htlc, value: 1n }));
  const domain = (await c.client.readContract({ address: htlc, abi: ABI, functionName: 'eip712Domain' })) as readonly unknown[];
  assert.deepEqual(domain.slice(1, 5), ['HTLC', '3', BigInt(CHAIN_ID), htlc]);
});

test('initiate: msg.value is locked under evmOrderId(...) and Initiated is emitted', async (t) => {
  const o = terms();
  const id = orderId(o);
  const receipt = await c.expectDeltas(
    c.ethBalance,
    [['initiator', o.initiator, -AMOUNT], ['redeemer', o.redeemer, 0n], ['htlc', htlc, AMOUNT]],
    () => c.send('initiator', initiate(o)),
    native,
  );
  assert.deepEqual(c.events(receipt, ABI, htlc), [['Initiated', { orderID: id, secretHash: o.secretHash, amount: AMOUNT }]]);
  assert.deepEqual(await readOrder(id), [o.initiator, o.redeemer, receipt.blockNumber, TIMELOCK, AMOUNT, 0n]);
  t.diagnostic(`gas initiate: ${receipt.gasUsed}`);
});

test('initiate rejects wrong msg.value, bad terms and duplicates', async () => {
  const dup = terms();
  await c.send('initiator', initiate(dup));
  const cases: Array<[string, Role, Call, string]> = [
    ['value < amount', 'initiator', initiate(terms(), AMOUNT - 1n), 'NativeHTLC__IncorrectFundsReceived'],
    ['value > amount', 'initiator', initiate(terms(), AMOUNT + 1n), 'NativeHTLC__IncorrectFundsReceived'],
    ['no value', 'initiator', initiate(terms(), 0n), 'NativeHTLC__IncorrectFundsReceived'],
    ['on behalf, value < amount', 'relayer', onBehalf(terms(), AMOUNT - 1n), 'NativeHTLC__IncorrectFundsReceived'],
    ['zero redeemer', 'initiator', initiate(terms({ redeemer: zeroAddress })), 'NativeHTLC__ZeroAddressRedeemer'],
    ['zero initiator (on behalf)', 'relayer', onBehalf(terms({ initiator: zeroAddress })), 'NativeHTLC__ZeroAddressInitiator'],
    ['initiator = redeemer', 'initiator', initiate(terms({ redeemer: c.addr('initiator') })), 'NativeHTLC__SameInitiatorAndRedeemer'],
    ['zero timelock', 'initiator', initiate(terms({ timelock: 0n })), 'NativeHTLC__ZeroTimelock'],
    ['zero amount', 'initiator', initiate(terms({ amount: 0n })), 'NativeHTLC__ZeroAmount'],
    ['funder = redeemer', 'redeemer', onBehalf(terms()), 'NativeHTLC__SameFunderAndRedeemer'],
    ['duplicate order', 'initiator', initiate(dup), 'NativeHTLC__DuplicateOrder'],
    ['duplicate order (on behalf)', 'relayer', onBehalf(dup), 'NativeHTLC__DuplicateOrder'],
  ];
  for (const [label, from, bad, error] of cases) await c.expectRevert(from, bad, error).catch((e: Error) => assert.fail(`${label}: ${e.message}`));
});

test('redeem: anyone submits the secret, the redeemer is paid; bad secrets and closed orders are rejected', async (t) => {
  const o = terms();
  const id = orderId(o);
  await c.send('initiator', initiate(o));
  const bad: Array<[string, Call, string]> = [
    ['31 bytes', call('redeem', [id, o.secret.slice(0, 64)]), 'NativeHTLC__InvalidSecretLength'],
    ['33 bytes', call('redeem', [id, `${o.secret}00`]), 'NativeHTLC__InvalidSecretLength'],
    ['wrong secret', call('redeem', [id, newSecret().secret]), 'NativeHTLC__IncorrectSecret'],
    ['unknown order', call('redeem', [orderId(terms()), o.secret]), 'NativeHTLC__OrderNotInitiated'],
  ];
  for (const [label, badCall, error] of bad) await c.expectRevert('stranger', badCall, error).catch((e: Error) => assert.fail(`${label}: ${e.message}`));

  const receipt = await c.expectDeltas(
    c.ethBalance,
    [['initiator', o.initiator, 0n], ['redeemer', o.redeemer, AMOUNT], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('redeem', [id, o.secret])),
    native,
  );
  assert.deepEqual(c.events(receipt, ABI, htlc), [['Redeemed', { orderID: id, secretHash: o.secretHash, secret: o.secret }]]);
  t.diagnostic(`gas redeem: ${receipt.gasUsed}`);
  await c.mineTo((await c.client.getBlockNumber()) + TIMELOCK + 1n);
  for (const [from, closed] of [
    ['stranger', call('redeem', [id, o.secret])],
    ['stranger', call('refund', [id])],
    ['redeemer', call('instantRefund', [id, '0x'])],
  ] as const) await c.expectRevert(from, closed, 'NativeHTLC__OrderFulfilled');
});

test('refund: not before initiatedAt + timelock < block.number, then anyone refunds to the initiator', async () => {
  const o = terms({ timelock: 2n });
  const id = orderId(o);
  const initiatedAt = (await c.send('initiator', initiate(o))).blockNumber;
  await c.mineTo(initiatedAt + o.timelock - 1n);
  await c.expectRevert('stranger', call('refund', [id]), 'NativeHTLC__OrderNotExpired');
  await c.expectRevert('stranger', call('refund', [orderId(terms())]), 'NativeHTLC__OrderNotInitiated');
  await c.mineTo(initiatedAt + o.timelock);
  const receipt = await c.expectDeltas(
    c.ethBalance,
    [['initiator', o.initiator, AMOUNT], ['redeemer', o.redeemer, 0n], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('refund', [id])),
    native,
  );
  assert.equal(receipt.blockNumber, initiatedAt + o.timelock + 1n);
  assert.deepEqual(c.events(receipt, ABI, htlc), [['Refunded', { orderID: id }]]);
  await c.expectRevert('stranger', call('refund', [id]), 'NativeHTLC__OrderFulfilled');
  await c.expectRevert('stranger', call('redeem', [id, o.secret]), 'NativeHTLC__OrderFulfilled');
});

test("initiateOnBehalf + instantRefund: the funder pays, the initiator is refunded with the redeemer's consent", async () => {
  const o = terms();
  const id = orderId(o);
  await c.expectDeltas(
    c.ethBalance,
    [['initiator', o.initiator, 0n], ['relayer', c.addr('relayer'), -AMOUNT], ['htlc', htlc, AMOUNT]],
    () => c.send('relayer', onBehalf(o)),
    native,
  );
  const digest = (await c.client.readContract({ address: htlc, abi: ABI, functionName: 'instantRefundDigest', args: [id] })) as Hex;
  const typed = {
    domain: { name: 'HTLC', version: '3', chainId: CHAIN_ID, verifyingContract: htlc },
    types: { Refund: [{ name: 'orderId', type: 'bytes32' }] },
    primaryType: 'Refund',
    message: { orderId: id },
  } as const;
  assert.equal(digest, hashTypedData(typed));
  await c.expectRevert('stranger', call('instantRefund', [id, '0x']), 'NativeHTLC__InvalidRedeemerSignature');
  await c.expectRevert('stranger', call('instantRefund', [id, await c.account('stranger').signTypedData(typed)]), 'NativeHTLC__InvalidRedeemerSignature');
  await c.expectRevert('stranger', call('instantRefund', [orderId(terms()), '0x']), 'NativeHTLC__OrderNotInitiated');
  const signature = await c.account('redeemer').signTypedData(typed);
  const receipt = await c.expectDeltas(
    c.ethBalance,
    [['initiator', o.initiator, AMOUNT], ['relayer', c.addr('relayer'), 0n], ['redeemer', o.redeemer, 0n], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('instantRefund', [id, signature])),
    native,
  );
  assert.deepEqual(c.events(receipt, ABI, htlc), [['Refunded', { orderID: id }]]);
  await c.expectRevert('stranger', call('instantRefund', [id, signature]), 'NativeHTLC__OrderFulfilled');

  const own = terms();
  await c.send('initiator', initiate(own));
  await c.expectDeltas(
    c.ethBalance,
    [['initiator', own.initiator, AMOUNT], ['redeemer', own.redeemer, 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('redeemer', call('instantRefund', [orderId(own), '0x'])), // the redeemer itself needs no signature
    native,
  );
});

test('payouts to contracts: a payee re-entering redeem or refund on receipt gets paid once', async () => {
  for (const path of ['redeem', 'refund'] as const) {
    const payee = await c.deploy(Reenterer, []);
    const o = path === 'redeem' ? terms({ redeemer: payee, timelock: 1n }) : terms({ initiator: payee, timelock: 1n });
    const id = orderId(o);
    const [action, args] = path === 'redeem' ? (['redeem', [id, o.secret]] as const) : (['refund', [id]] as const);
    await c.send('relayer', { address: payee, abi: Reenterer.abi, functionName: 'arm', args: [htlc, encodeFunctionData({ abi: ABI, functionName: action, args })] });
    await c.send('relayer', onBehalf(o));
    await c.mineTo((await c.client.getBlockNumber()) + 1n);
    await c.expectDeltas(c.ethBalance, [['payee', payee, AMOUNT], ['htlc', htlc, -AMOUNT]], () => c.send('stranger', call(action, args)), native);
    const read = (functionName: string) => c.client.readContract({ address: payee, abi: Reenterer.abi, functionName });
    assert.deepEqual([await read('calls'), await read('reentered')], [1n, false], path);
  }
});
