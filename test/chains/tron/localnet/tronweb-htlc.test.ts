// The unmodified TronWeb against the local Tron chain: approve USDT, initiate as Garden's TronRelay does,
// a TIP-712 gasless initiate relayed through initiateWithSignature, redeem, refund after expiry; the
// watcher's per-block reads (blocks with their transactions, every receipt of a block with its logs).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TronWeb } from 'tronweb';
import { decodeEventLog, sha256, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { evmHexToTron, initiateTypedData, tronOrderId, tronToEvmHex } from '../../../../src/chains/tron/index.ts';
import { tronContractArtifact } from '../../../../src/localnet/tron/contracts.ts';
import { LOCAL_TRON_CHAIN_ID, LOCAL_TRON_EVM_CHAIN_ID } from '../../../../src/localnet/tron/local-chain.ts';
import { initiateTypedData as evmTypedData } from '../../../../src/chains/solidity-htlc/typed-data.ts';
import { startTronTestChain, tronAddressOf, tronPrivateKey, type DevRole, type TronTestChain } from '../../../helpers/tron-localnet.ts';

const HTLC_ABI = tronContractArtifact('TronHTLC').abi;
const FEE_LIMIT = 150_000_000;

let c: TronTestChain;

before(async () => {
  c = await startTronTestChain();
});
after(() => c?.stop());

interface Info {
  id: string;
  blockNumber: number;
  result?: string;
  receipt: { result: string; energy_usage_total: number };
  log?: Array<{ address: string; topics: string[]; data: string }>;
}

/** Builds through the node, signs and broadcasts as `role` the way TronRelay does, then returns the receipt. */
async function send(role: DevRole, contract: string, method: string, params: Array<{ type: string; value: unknown }>): Promise<Info> {
  const tw = c.tronWeb(role);
  const built = await tw.transactionBuilder.triggerSmartContract(contract, method, { feeLimit: FEE_LIMIT, callValue: 0 }, params, tronAddressOf(role));
  const signed = await tw.trx.sign(built.transaction);
  const sent = await tw.trx.sendRawTransaction(signed);
  assert.equal(sent.result, true, `${method}: ${JSON.stringify({ ...sent, transaction: undefined })}`);
  const tx = (await tw.trx.getTransaction(signed.txID)) as unknown as { ret: Array<{ contractRet: string }> };
  assert.equal(tx.ret[0]!.contractRet, 'SUCCESS', method);
  return await tw.trx.getUnconfirmedTransactionInfo(signed.txID);
}

async function usdtOf(tw: TronWeb, who: string): Promise<bigint> {
  const answer = await tw.transactionBuilder.triggerConstantContract(c.deployment.usdt, 'balanceOf(address)', {}, [{ type: 'address', value: who }], who);
  return BigInt(`0x${answer.constant_result[0]}`);
}

function newSecret(): { secret: Hex; secretHash: Hex } {
  const secret = toHex(randomBytes(32));
  return { secret, secretHash: sha256(secret) };
}

const orderIdOf = (initiator: string, redeemer: string, timelock: bigint, amount: bigint, secretHash: Hex) =>
  tronOrderId({ chainId: `tron:${LOCAL_TRON_CHAIN_ID}`, secretHash: secretHash.slice(2), initiator, redeemer, timelock, amount, htlc: c.deployment.usdtHtlc });

/** The HTLC's events in a receipt, decoded. */
const events = (info: Info) =>
  (info.log ?? [])
    .filter((log) => `41${log.address}` === tronToEvmHex(c.deployment.usdtHtlc).replace(/^0x/, '41').toLowerCase())
    .map((log) => decodeEventLog({ abi: HTLC_ABI, topics: log.topics.map((t) => `0x${t}`) as [Hex, ...Hex[]], data: `0x${log.data}` }));

test("approve, then initiate(address,uint256,uint256,bytes32,bytes) as Garden's TronRelay calls it, then redeem with the secret", async () => {
  const user = c.tronWeb('user');
  const [initiator, redeemer] = [tronAddressOf('user'), tronAddressOf('solver')];
  const amount = 25_000_000n;
  const timelock = 200n;
  const { secret, secretHash } = newSecret();
  const before = [await usdtOf(user, initiator), await usdtOf(user, redeemer), await usdtOf(user, c.deployment.usdtHtlc)];

  await send('user', c.deployment.usdt, 'approve(address,uint256)', [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: amount.toString() }]);
  const initiated = await send('user', c.deployment.usdtHtlc, 'initiate(address,uint256,uint256,bytes32,bytes)', [
    { type: 'address', value: redeemer },
    { type: 'uint256', value: timelock.toString() },
    { type: 'uint256', value: amount.toString() },
    { type: 'bytes32', value: secretHash },
    { type: 'bytes', value: '0x' },
  ]);
  const orderId = `0x${orderIdOf(initiator, redeemer, timelock, amount, secretHash)}`;
  assert.deepEqual(
    events(initiated).map((e) => [e.eventName, (e.args as unknown as { orderID: Hex }).orderID]),
    [['Initiated', orderId], ['InitiatedWithDestinationData', orderId]],
  );
  assert.equal(await usdtOf(user, c.deployment.usdtHtlc), before[2]! + amount);

  const redeemed = await send('solver', c.deployment.usdtHtlc, 'redeem(bytes32,bytes)', [{ type: 'bytes32', value: orderId }, { type: 'bytes', value: secret }]);
  const [event] = events(redeemed);
  assert.equal(event?.eventName, 'Redeemed');
  assert.equal((event?.args as unknown as { secret: Hex }).secret, secret);
  assert.deepEqual([await usdtOf(user, initiator), await usdtOf(user, redeemer), await usdtOf(user, c.deployment.usdtHtlc)], [before[0]! - amount, before[1]! + amount, before[2]!]);
});

test('a TIP-712 gasless initiate: TronWeb signs the typed data the service hands out, the relayer sends initiateWithSignature and pays the energy', async () => {
  const user = c.tronWeb('user');
  const relayer = c.tronWeb('relayer');
  const [initiator, redeemer] = [tronAddressOf('user'), tronAddressOf('solver')];
  const amount = 7_000_000n;
  const timelock = 200n;
  const { secretHash } = newSecret();
  await send('user', c.deployment.usdt, 'approve(address,uint256)', [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: amount.toString() }]);

  const typed = initiateTypedData({ chainId: BigInt(LOCAL_TRON_CHAIN_ID), htlc: c.deployment.usdtHtlc, redeemer, timelock, amount, secretHash: secretHash.slice(2) });
  const signature = user.trx._signTypedData(typed.domain, { Initiate: [...typed.types.Initiate] }, typed.message, tronPrivateKey('user'));
  // TronWeb's TIP-712 signature is the EIP-712 one over the 20-byte addresses.
  const evmTerms = { htlc: tronToEvmHex(c.deployment.usdtHtlc), redeemer: tronToEvmHex(redeemer), timelock, amount, secretHash };
  const account = privateKeyToAccount(`0x${tronPrivateKey('user')}`);
  assert.equal(signature, await account.signTypedData(evmTypedData({ chainId: BigInt(LOCAL_TRON_CHAIN_ID), ...evmTerms })));
  const unmasked = await account.signTypedData(evmTypedData({ chainId: BigInt(LOCAL_TRON_EVM_CHAIN_ID), ...evmTerms }));
  const withSignature = (sig: string) => [
    { type: 'address', value: initiator },
    { type: 'address', value: redeemer },
    { type: 'uint256', value: timelock.toString() },
    { type: 'uint256', value: amount.toString() },
    { type: 'bytes32', value: secretHash },
    { type: 'bytes', value: sig },
  ];
  const refused = await relayer.transactionBuilder.triggerConstantContract(c.deployment.usdtHtlc, 'initiateWithSignature(address,address,uint256,uint256,bytes32,bytes)', {}, withSignature(unmasked), tronAddressOf('relayer')).catch((e: Error) => e);
  assert.ok(refused instanceof Error, 'a signature over the unmasked chain id is refused');

  const trxBefore = [await relayer.trx.getBalance(tronAddressOf('relayer')), await relayer.trx.getBalance(initiator)];
  const usdtBefore = await usdtOf(user, initiator);
  const info = await send('relayer', c.deployment.usdtHtlc, 'initiateWithSignature(address,address,uint256,uint256,bytes32,bytes)', withSignature(signature));
  assert.equal(events(info)[0]?.eventName, 'Initiated');
  assert.equal(await usdtOf(user, initiator), usdtBefore - amount);
  const fee = BigInt((info as unknown as { fee: number }).fee);
  assert.ok(fee > 0n);
  assert.deepEqual([await relayer.trx.getBalance(tronAddressOf('relayer')), await relayer.trx.getBalance(initiator)], [trxBefore[0]! - Number(fee), trxBefore[1]]);
});

test('refund: refused by the contract before the timelock has passed, paid back to the initiator after it', async () => {
  const user = c.tronWeb('user');
  const [initiator, redeemer] = [tronAddressOf('user'), tronAddressOf('solver')];
  const amount = 3_000_000n;
  const timelock = 3n;
  const { secretHash } = newSecret();
  await send('user', c.deployment.usdt, 'approve(address,uint256)', [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: amount.toString() }]);
  const initiated = await send('user', c.deployment.usdtHtlc, 'initiate(address,uint256,uint256,bytes32,bytes)', [
    { type: 'address', value: redeemer },
    { type: 'uint256', value: timelock.toString() },
    { type: 'uint256', value: amount.toString() },
    { type: 'bytes32', value: secretHash },
    { type: 'bytes', value: '0x' },
  ]);
  const orderId = `0x${orderIdOf(initiator, redeemer, timelock, amount, secretHash)}`;
  const early = await user.transactionBuilder.triggerConstantContract(c.deployment.usdtHtlc, 'refund(bytes32)', {}, [{ type: 'bytes32', value: orderId }], initiator).catch((e: Error) => e);
  assert.ok(early instanceof Error, 'refund before expiry fails');
  // Sent anyway, the refund lands in a block and reverts.
  const tw = c.tronWeb('user');
  const built = await tw.transactionBuilder.triggerSmartContract(c.deployment.usdtHtlc, 'refund(bytes32)', { feeLimit: FEE_LIMIT }, [{ type: 'bytes32', value: orderId }], initiator);
  const signed = await tw.trx.sign(built.transaction);
  assert.equal((await tw.trx.sendRawTransaction(signed)).result, true);
  const reverted = (await tw.trx.getUnconfirmedTransactionInfo(signed.txID)) as unknown as Info;
  assert.deepEqual([reverted.result, reverted.receipt.result], ['FAILED', 'REVERT']);

  // The refund is mined in the block after the head: block initiatedAt + timelock + 1 once the head is initiatedAt + timelock.
  await c.localnet.mine(Number(timelock) - ((await c.localnet.chain.headNumber()) - initiated.blockNumber));
  const usdtBefore = await usdtOf(user, initiator);
  const refunded = await send('solver', c.deployment.usdtHtlc, 'refund(bytes32)', [{ type: 'bytes32', value: orderId }]);
  assert.equal(refunded.blockNumber, initiated.blockNumber + Number(timelock) + 1);
  assert.equal(events(refunded)[0]?.eventName, 'Refunded');
  assert.equal(await usdtOf(user, initiator), usdtBefore + amount);
});

test("a watcher's reads cost per block: getblockbylimitnext and gettransactioninfobyblocknum give a block's transactions and logs; the solidified view lags", async () => {
  const info = await send('user', c.deployment.usdt, 'approve(address,uint256)', [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: '5' }]);
  const post = async (path: string, body: object) => (await fetch(`${c.localnet.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;
  const { block } = (await post('/wallet/getblockbylimitnext', { startNum: info.blockNumber - 1, endNum: info.blockNumber + 1 })) as { block: Array<{ blockID: string; block_header: { raw_data: { number: number; parentHash: string } }; transactions?: Array<{ txID: string; ret: unknown }> }> };
  assert.deepEqual(block.map((b) => b.block_header.raw_data.number), [info.blockNumber - 1, info.blockNumber]);
  assert.equal(block[1]!.block_header.raw_data.parentHash, block[0]!.blockID);
  assert.equal(parseInt(block[1]!.blockID.slice(0, 16), 16), info.blockNumber);
  assert.deepEqual(block[1]!.transactions?.map((t) => [t.txID, t.ret]), [[info.id, [{ contractRet: 'SUCCESS' }]]]);
  const infos = (await post('/wallet/gettransactioninfobyblocknum', { num: info.blockNumber })) as unknown as Info[];
  // TronWeb's raw mode asks with GET and the query string: the same answer.
  assert.deepEqual(await (await fetch(`${c.localnet.url}/wallet/gettransactioninfobyblocknum?num=${info.blockNumber}`)).json(), infos);
  assert.deepEqual(infos.map((i) => [i.id, i.log?.length]), [[info.id, 1]]);
  // Solidified one block later (the tests' depth): not before.
  assert.deepEqual(await post('/walletsolidity/gettransactioninfobyid', { value: info.id }), {});
  assert.deepEqual(await post('/walletsolidity/gettransactioninfobyblocknum', { num: info.blockNumber }), []);
  await c.localnet.mine();
  assert.equal(((await post('/walletsolidity/gettransactioninfobyid', { value: info.id })) as unknown as Info).id, info.id);
  const account = await post('/wallet/getaccount', { address: tronAddressOf('user'), visible: true });
  assert.equal(account.address, tronAddressOf('user'));
  assert.ok(Number(account.balance) > 0);
  const stranger = evmHexToTron(privateKeyToAccount(generatePrivateKey()).address);
  assert.deepEqual(await post('/wallet/getaccount', { address: stranger }), {}, 'an account without TRX is not activated');
});

test('a block with transactions is built once: read again, it asks anvil for no receipt, and answers the same', async () => {
  const info = await send('user', c.deployment.usdt, 'approve(address,uint256)', [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: '6' }]);
  const anvil = c.localnet.chain.anvil;
  const rpc = anvil.rpc.bind(anvil);
  const asked: string[] = [];
  anvil.rpc = (method: string, params?: unknown[]) => {
    asked.push(method);
    return rpc(method, params);
  };
  try {
    const first = await c.localnet.chain.block(info.blockNumber);
    assert.equal((first?.transactions as Array<{ txID: string }>).map((t) => t.txID).join(), info.id);
    asked.length = 0;
    assert.deepEqual(await c.localnet.chain.block(info.blockNumber), first);
    assert.deepEqual(asked.filter((m) => m === 'eth_getTransactionReceipt'), []);
  } finally {
    anvil.rpc = rpc;
  }
});

test("getblock answers a block's header alone unless detail is true, as java-tron does; getnowblock answers it whole", async () => {
  const info = await send('user', c.deployment.usdt, 'approve(address,uint256)', [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: '7' }]);
  const post = async (path: string, body: object) => (await fetch(`${c.localnet.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;
  const whole = await post('/wallet/getblockbynum', { num: info.blockNumber });
  assert.deepEqual(whole.transactions?.map((t: { txID: string }) => t.txID), [info.id], 'getblockbynum carries the transactions');
  const header = await post('/wallet/getblock', { id_or_num: String(info.blockNumber) });
  assert.equal(header.blockID, whole.blockID);
  assert.equal(header.transactions, undefined, 'no transactions without detail');
  assert.deepEqual(header.block_header, whole.block_header);
  assert.deepEqual((await post('/wallet/getblock', { id_or_num: whole.blockID, detail: true })).transactions, whole.transactions, 'by its id, with detail');
  const otherId = `${whole.blockID.slice(0, 16)}${'0'.repeat(48)}`;
  assert.deepEqual(await post('/wallet/getblock', { id_or_num: otherId }), {}, 'an id whose hash is not the block at that number');
  const head = await post('/wallet/getblock', {});
  const now = await post('/wallet/getnowblock', {});
  assert.ok(head.block_header.raw_data.number >= info.blockNumber, 'no id: the head');
  assert.equal(head.transactions, undefined);
  assert.ok(now.block_header.raw_data.number >= head.block_header.raw_data.number, 'getnowblock: the head too');
});

test('visible: true: a call asked with base58 addresses is built with them, and signs and runs as the hex form does', async () => {
  const tw = c.tronWeb('user');
  const parameter = tw.utils.abi.encodeParams(['address', 'uint256'], [tronToEvmHex(c.deployment.usdtHtlc), 9]).slice(2);
  const res = await fetch(`${c.localnet.url}/wallet/triggersmartcontract`, {
    method: 'POST',
    body: JSON.stringify({ visible: true, owner_address: tronAddressOf('user'), contract_address: c.deployment.usdt, function_selector: 'approve(address,uint256)', parameter, fee_limit: FEE_LIMIT }),
  });
  const built = (await res.json()) as { transaction: { visible: boolean; raw_data: { contract: Array<{ parameter: { value: Record<string, string> } }> } } };
  const value = built.transaction.raw_data.contract[0]!.parameter.value;
  assert.deepEqual([built.transaction.visible, value.owner_address, value.contract_address], [true, tronAddressOf('user'), c.deployment.usdt]);
  const signed = await tw.trx.sign(built.transaction as never);
  assert.equal((await tw.trx.sendRawTransaction(signed)).result, true);
  const info = (await tw.trx.getUnconfirmedTransactionInfo((signed as { txID: string }).txID)) as unknown as Info & { contract_address: string };
  assert.deepEqual([info.receipt.result, info.contract_address], ['SUCCESS', TronWeb.address.toHex(c.deployment.usdt).toLowerCase()]);
});
