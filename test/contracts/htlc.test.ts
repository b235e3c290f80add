import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { encodeFunctionData, hashTypedData, toFunctionSelector, zeroAddress, type Address, type Hex } from 'viem';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { evmOrderId } from '../../src/chains/evm/order-id.ts';
import { initiateTypedData } from '../../src/chains/solidity-htlc/typed-data.ts';
import { CHAIN_ID, mockArtifacts, fundTokenHolders, htlcTerms, newSecret, readHtlcOrder, startChain, type Call, type Chain, type HtlcTerms, type Role } from './setup.ts';

const HTLC_ABI = contractArtifact('HTLC').abi;
const TOKEN_ABI = contractArtifact('TestToken').abi;
const AMOUNT = 150_000_000n; // 1.5 of an 8-decimal token
const TIMELOCK = 10n;

let c: Chain;
let token: Address;
let htlc: Address;
let balance: (a: Address) => Promise<bigint>;

const call = (functionName: string, args: readonly unknown[]): Call => ({ address: htlc, abi: HTLC_ABI, functionName, args });
const tokenCall = (functionName: string, args: readonly unknown[]): Call => ({ address: token, abi: TOKEN_ABI, functionName, args });
type Terms = HtlcTerms;
const terms = (over: Partial<Terms> = {}): Terms => htlcTerms(c, { amount: AMOUNT, timelock: TIMELOCK }, over);
const orderId = (t: Terms): Hex => evmOrderId({ chainId: BigInt(CHAIN_ID), htlc, ...t });
const initiate = (t: Terms) => call('initiate', [t.redeemer, t.timelock, t.amount, t.secretHash]);
const onBehalf = (t: Terms) => call('initiateOnBehalf', [t.initiator, t.redeemer, t.timelock, t.amount, t.secretHash]);
const withSignature = (t: Terms, signature: Hex) => call('initiateWithSignature', [t.initiator, t.redeemer, t.timelock, t.amount, t.secretHash, signature]);
const signInitiate = (signer: Role, t: Terms, contract = htlc) =>
  c.account(signer).signTypedData(initiateTypedData({ chainId: BigInt(CHAIN_ID), htlc: contract, ...t }));
const refundTypedData = (id: Hex, contract = htlc) =>
  ({
    domain: { name: 'HTLC', version: '3', chainId: CHAIN_ID, verifyingContract: contract },
    types: { Refund: [{ name: 'orderId', type: 'bytes32' }] },
    primaryType: 'Refund',
    message: { orderId: id },
  }) as const;
const readOrder = (id: Hex) => readHtlcOrder(c, htlc, HTLC_ABI, id);

/** Initiates `t` from the initiator and returns the mined block. */
async function open(t: Terms): Promise<bigint> {
  return (await c.send('initiator', initiate(t))).blockNumber;
}

before(async () => {
  c = await startChain();
  token = await c.deploy('TestToken', ['Wrapped Bitcoin (test)', 'WBTC', 8, c.addr('deployer')]);
  htlc = await c.deploy('HTLC', [token]);
  balance = c.tokenBalance(token);
  await fundTokenHolders(c, token, TOKEN_ABI, htlc, AMOUNT);
});

after(() => c?.stop());

test('deploys with its token and the EIP-712 domain HTLC/3', async () => {
  assert.equal(await c.client.readContract({ address: htlc, abi: HTLC_ABI, functionName: 'token' }), token);
  const domain = (await c.client.readContract({ address: htlc, abi: HTLC_ABI, functionName: 'eip712Domain' })) as readonly unknown[];
  assert.deepEqual(domain.slice(1, 5), ['HTLC', '3', BigInt(CHAIN_ID), htlc]);
});

test("custom error selectors equal Garden's v3 HTLC", () => {
  const garden: Record<string, Hex> = {
    ZeroAddressRedeemer: '0x32a4beb3', ZeroTimelock: '0xcb5d8501', ZeroAmount: '0x4d15835c', OrderNotInitiated: '0xca1eac12',
    OrderFulfilled: '0x356b842c', IncorrectSecret: '0x3dbd7ab4', OrderNotExpired: '0x839f009c', SameInitiatorAndRedeemer: '0xd3eb4c21',
    DuplicateOrder: '0x90c06174', InvalidRedeemerSignature: '0xb41ed7a7', SameFunderAndRedeemer: '0xc7ea8167',
    ZeroAddressInitiator: '0x5411490b', InvalidInitiatorSignature: '0x3b3fd9ae',
  };
  const declared = HTLC_ABI.filter((x) => x.type === 'error').map((x) => x.name);
  for (const [name, selector] of Object.entries(garden)) {
    assert.ok(declared.includes(`HTLC__${name}`), name);
    assert.equal(toFunctionSelector(`HTLC__${name}()`), selector, name);
  }
});

test('initiate: the order is stored under evmOrderId(...), Initiated is emitted, exactly amount moves from the initiator', async (t) => {
  const o = terms();
  const id = orderId(o);
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, -AMOUNT], ['redeemer', o.redeemer, 0n], ['htlc', htlc, AMOUNT]],
    () => c.send('initiator', initiate(o)),
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Initiated', { orderID: id, secretHash: o.secretHash, amount: AMOUNT }]]);
  assert.deepEqual(await readOrder(id), [o.initiator, o.redeemer, receipt.blockNumber, TIMELOCK, AMOUNT, 0n]);
  t.diagnostic(`gas initiate: ${receipt.gasUsed}`);
});

test('initiate rejects bad terms and duplicates, without moving tokens', async () => {
  const dup = terms();
  await open(dup);
  const cases: Array<[string, Role, Call, string]> = [
    ['zero redeemer', 'initiator', initiate(terms({ redeemer: zeroAddress })), 'HTLC__ZeroAddressRedeemer'],
    ['zero initiator (on behalf)', 'relayer', onBehalf(terms({ initiator: zeroAddress })), 'HTLC__ZeroAddressInitiator'],
    ['initiator = redeemer', 'initiator', initiate(terms({ redeemer: c.addr('initiator') })), 'HTLC__SameInitiatorAndRedeemer'],
    ['initiator = redeemer (on behalf)', 'relayer', onBehalf(terms({ initiator: c.addr('stranger'), redeemer: c.addr('stranger') })), 'HTLC__SameInitiatorAndRedeemer'],
    ['zero timelock', 'initiator', initiate(terms({ timelock: 0n })), 'HTLC__ZeroTimelock'],
    ['zero amount', 'initiator', initiate(terms({ amount: 0n })), 'HTLC__ZeroAmount'],
    ['funder = redeemer', 'redeemer', onBehalf(terms()), 'HTLC__SameFunderAndRedeemer'],
    ['duplicate order', 'initiator', initiate(dup), 'HTLC__DuplicateOrder'],
    ['duplicate order (on behalf, other funder)', 'relayer', onBehalf(dup), 'HTLC__DuplicateOrder'],
    ['zero initiator (signature)', 'relayer', withSignature(terms({ initiator: zeroAddress }), '0x'), 'HTLC__InvalidInitiatorSignature'],
  ];
  const htlcBalance = await balance(htlc);
  for (const [label, from, badCall, error] of cases) await c.expectRevert(from, badCall, error).catch((e: Error) => assert.fail(`${label}: ${e.message}`));
  // A funder without allowance fails in the token (the order write is rolled back with it).
  await c.expectRevert('stranger', { ...initiate(terms({ initiator: c.addr('stranger') })), abi: [...HTLC_ABI, ...TOKEN_ABI] }, 'ERC20InsufficientAllowance');
  assert.equal(await balance(htlc), htlcBalance);
});

test('redeem: anyone submits the secret, the redeemer is paid, Redeemed carries the secret; then the order is closed', async (t) => {
  const o = terms();
  const id = orderId(o);
  await open(o);
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, 0n], ['redeemer', o.redeemer, AMOUNT], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('redeem', [id, o.secret])),
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Redeemed', { orderID: id, secretHash: o.secretHash, secret: o.secret }]]);
  assert.equal((await readOrder(id))[5], receipt.blockNumber);
  t.diagnostic(`gas redeem: ${receipt.gasUsed}`);

  await c.mineTo((await c.client.getBlockNumber()) + TIMELOCK + 1n); // even once expired
  for (const [from, closed] of [
    ['stranger', call('redeem', [id, o.secret])], // double redeem
    ['stranger', call('refund', [id])],
    ['redeemer', call('instantRefund', [id, '0x'])],
  ] as const) await c.expectRevert(from, closed, 'HTLC__OrderFulfilled');
});

test('redeem rejects secrets that are not 32 bytes or not the preimage, and unknown orders', async () => {
  const o = terms();
  const id = orderId(o);
  await open(o);
  const other = newSecret();
  const cases: Array<[string, Call, string]> = [
    ['31 bytes', call('redeem', [id, o.secret.slice(0, 64)]), 'HTLC__InvalidSecretLength'],
    ['33 bytes', call('redeem', [id, `${o.secret}00`]), 'HTLC__InvalidSecretLength'],
    ['empty', call('redeem', [id, '0x']), 'HTLC__InvalidSecretLength'],
    ['wrong secret', call('redeem', [id, other.secret]), 'HTLC__IncorrectSecret'],
    ['secret hash instead of secret', call('redeem', [id, o.secretHash]), 'HTLC__IncorrectSecret'],
    ['unknown order', call('redeem', [orderId({ ...o, ...other }), other.secret]), 'HTLC__OrderNotInitiated'],
  ];
  for (const [label, bad, error] of cases) await c.expectRevert('stranger', bad, error).catch((e: Error) => assert.fail(`${label}: ${e.message}`));
  await c.send('stranger', call('redeem', [id, o.secret])); // still redeemable with the right one
});

test('refund: only once initiatedAt + timelock < block.number, then anyone refunds to the initiator; the order is closed', async (t) => {
  const o = terms({ timelock: 3n });
  const id = orderId(o);
  const initiatedAt = await open(o);
  await c.expectRevert('stranger', call('refund', [id]), 'HTLC__OrderNotExpired'); // pending block initiatedAt + 1
  await c.mineTo(initiatedAt + o.timelock - 1n);
  await c.expectRevert('stranger', call('refund', [id]), 'HTLC__OrderNotExpired'); // pending block initiatedAt + timelock
  // Mined for real in block initiatedAt + timelock: reverts on chain.
  const hash = await c.wallet('stranger').writeContract({ ...call('refund', [id]), gas: 200_000n });
  const failed = await c.client.waitForTransactionReceipt({ hash });
  assert.deepEqual([failed.status, failed.blockNumber], ['reverted', initiatedAt + o.timelock]);

  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, AMOUNT], ['redeemer', o.redeemer, 0n], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('refund', [id])),
  );
  assert.equal(receipt.blockNumber, initiatedAt + o.timelock + 1n);
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Refunded', { orderID: id }]]);
  assert.equal((await readOrder(id))[5], receipt.blockNumber);
  t.diagnostic(`gas refund: ${receipt.gasUsed}`);

  for (const [from, closed] of [
    ['stranger', call('refund', [id])], // double refund
    ['stranger', call('redeem', [id, o.secret])], // redeem after refund
    ['redeemer', call('instantRefund', [id, '0x'])],
  ] as const) await c.expectRevert(from, closed, 'HTLC__OrderFulfilled');
  await c.expectRevert('stranger', call('refund', [orderId(terms())]), 'HTLC__OrderNotInitiated');
});

test('initiateOnBehalf: the funder pays, the order is the initiator\'s; the redeemer itself may instant-refund it to the initiator', async () => {
  const o = terms();
  const id = orderId(o);
  await c.expectDeltas(
    balance,
    [['initiator', o.initiator, 0n], ['relayer', c.addr('relayer'), -AMOUNT], ['htlc', htlc, AMOUNT]],
    () => c.send('relayer', onBehalf(o)),
  );
  assert.deepEqual((await readOrder(id)).slice(0, 2), [o.initiator, o.redeemer]);
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, AMOUNT], ['relayer', c.addr('relayer'), 0n], ['redeemer', o.redeemer, 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('redeemer', call('instantRefund', [id, '0x'])), // no signature needed from the redeemer itself
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Refunded', { orderID: id }]]);
});

test("initiateWithSignature: a signature over the service's initiateTypedData is accepted; replays, foreign and tampered signatures are not", async (t) => {
  const o = terms();
  const id = orderId(o);
  const signature = await signInitiate('initiator', o);
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, -AMOUNT], ['relayer', c.addr('relayer'), 0n], ['htlc', htlc, AMOUNT]],
    () => c.send('relayer', withSignature(o, signature)),
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Initiated', { orderID: id, secretHash: o.secretHash, amount: AMOUNT }]]);
  assert.deepEqual(await readOrder(id), [o.initiator, o.redeemer, receipt.blockNumber, o.timelock, o.amount, 0n]);
  t.diagnostic(`gas initiateWithSignature: ${receipt.gasUsed}`);

  await c.expectRevert('relayer', withSignature(o, signature), 'HTLC__DuplicateOrder'); // replay
  await c.send('redeemer', call('instantRefund', [id, '0x']));
  await c.expectRevert('stranger', withSignature(o, signature), 'HTLC__DuplicateOrder'); // replay after the order closed

  const fresh = terms();
  const cases: Array<[string, Promise<Hex>, Terms]> = [
    ['signed by another key', signInitiate('stranger', fresh), fresh],
    ['signed by the redeemer', signInitiate('redeemer', fresh), fresh],
    ['amount tampered', signInitiate('initiator', fresh), { ...fresh, amount: AMOUNT + 1n }],
    ['redeemer swapped', signInitiate('initiator', fresh), { ...fresh, redeemer: c.addr('stranger') }],
    ['another contract (domain)', signInitiate('initiator', fresh, token), fresh],
    ['empty', Promise.resolve<Hex>('0x'), fresh],
    ['garbage', Promise.resolve<Hex>(`0x${'ab'.repeat(65)}`), fresh],
  ];
  for (const [label, sig, used] of cases) {
    await c.expectRevert('relayer', withSignature(used, await sig), 'HTLC__InvalidInitiatorSignature').catch((e: Error) => assert.fail(`${label}: ${e.message}`));
  }
});

test("instantRefund: a stranger needs the redeemer's Refund(orderId) signature; instantRefundDigest is viem's hashTypedData", async (t) => {
  const o = terms();
  const id = orderId(o);
  await open(o);
  const digest = await c.client.readContract({ address: htlc, abi: HTLC_ABI, functionName: 'instantRefundDigest', args: [id] });
  assert.equal(digest, hashTypedData(refundTypedData(id)));

  const cases: Array<[string, Role, Hex]> = [
    ['no signature', 'stranger', '0x'],
    ['no signature, by the initiator', 'initiator', '0x'],
    ['signed by the initiator', 'stranger', await c.account('initiator').signTypedData(refundTypedData(id))],
    ['redeemer signed another order', 'stranger', await c.account('redeemer').signTypedData(refundTypedData(orderId(terms())))],
    ['redeemer signed for another contract', 'stranger', await c.account('redeemer').signTypedData(refundTypedData(id, token))],
  ];
  for (const [label, from, sig] of cases) {
    await c.expectRevert(from, call('instantRefund', [id, sig]), 'HTLC__InvalidRedeemerSignature').catch((e: Error) => assert.fail(`${label}: ${e.message}`));
  }
  await c.expectRevert('stranger', call('instantRefund', [orderId(terms()), '0x']), 'HTLC__OrderNotInitiated');

  const signature = await c.account('redeemer').sign({ hash: digest }); // raw digest signing works too
  const receipt = await c.expectDeltas(
    balance,
    [['initiator', o.initiator, AMOUNT], ['redeemer', o.redeemer, 0n], ['stranger', c.addr('stranger'), 0n], ['htlc', htlc, -AMOUNT]],
    () => c.send('stranger', call('instantRefund', [id, signature])),
  );
  assert.deepEqual(c.events(receipt, HTLC_ABI, htlc), [['Refunded', { orderID: id }]]);
  t.diagnostic(`gas instantRefund (signature): ${receipt.gasUsed}`);
  await c.expectRevert('stranger', call('instantRefund', [id, signature]), 'HTLC__OrderFulfilled'); // double instant refund
});

test('ERC-1271 smart wallets: gasless initiate signed by the wallet owner, instant-refund consent from a wallet redeemer', async () => {
  const { SmartWallet } = mockArtifacts();
  const sw = await c.deploy(SmartWallet!, [c.addr('walletOwner')]);
  await c.send('deployer', tokenCall('mint', [sw, AMOUNT]));
  await c.send('walletOwner', { address: sw, abi: SmartWallet!.abi, functionName: 'execute', args: [token, encodeFunctionData({ abi: TOKEN_ABI, functionName: 'approve', args: [htlc, AMOUNT] })] });

  const o = terms({ initiator: sw });
  await c.expectRevert('relayer', withSignature(o, await signInitiate('stranger', o)), 'HTLC__InvalidInitiatorSignature');
  await c.expectDeltas(
    balance,
    [['wallet', sw, -AMOUNT], ['relayer', c.addr('relayer'), 0n], ['htlc', htlc, AMOUNT]],
    async () => c.send('relayer', withSignature(o, await signInitiate('walletOwner', o))),
  );
  assert.equal((await readOrder(orderId(o)))[0], sw);

  const toWallet = terms({ redeemer: sw });
  const id = orderId(toWallet);
  await open(toWallet);
  await c.expectRevert('stranger', call('instantRefund', [id, await c.account('stranger').signTypedData(refundTypedData(id))]), 'HTLC__InvalidRedeemerSignature');
  await c.expectDeltas(
    balance,
    [['initiator', toWallet.initiator, AMOUNT], ['wallet', sw, 0n], ['htlc', htlc, -AMOUNT]],
    async () => c.send('stranger', call('instantRefund', [id, await c.account('walletOwner').signTypedData(refundTypedData(id))])),
  );
});
