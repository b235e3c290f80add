// The local Tron chain refuses what a java-tron node refuses, with the same result codes, and runs out
// of energy as Tron does when fee_limit does not cover the call. Transactions are built and signed by
// the unmodified TronWeb; the tampered ones are re-encoded with TronWeb's own protobuf utilities.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { utils, type TronWeb } from 'tronweb';
import { startTronTestChain, tronAddressOf, tronPrivateKey, type TronTestChain } from '../../../helpers/tron-localnet.ts';

// TronWeb's transaction types are generic over the contract; these tests handle them as plain JSON.
type Tx = Record<string, unknown> & { txID: string; raw_data: Record<string, unknown> & { expiration: number; ref_block_bytes: string; ref_block_hash: string; fee_limit: number }; raw_data_hex: string; signature?: string[] };

let c: TronTestChain;
let user: TronWeb;
const USER = () => tronAddressOf('user');

before(async () => {
  c = await startTronTestChain();
  user = c.tronWeb('user');
});
after(() => c?.stop());

const clone = (tx: Tx): Tx => JSON.parse(JSON.stringify(tx)) as Tx;

/** An unsigned USDT approve built by the node, as TronWeb asks for it. */
async function approve(amount: number, feeLimit = 100_000_000): Promise<Tx> {
  const built = await user.transactionBuilder.triggerSmartContract(c.deployment.usdt, 'approve(address,uint256)', { feeLimit }, [{ type: 'address', value: c.deployment.usdtHtlc }, { type: 'uint256', value: amount }], USER());
  return built.transaction as unknown as Tx;
}

/** raw_data_hex and txID recomputed from the (changed) JSON with TronWeb's utilities: a transaction that is well formed again. */
function reencode(tx: Tx): Tx {
  const pb = utils.transaction.txJsonToPb(tx);
  return { ...tx, raw_data_hex: utils.transaction.txPbToRawDataHex(pb), txID: utils.transaction.txPbToTxID(pb).replace(/^0x/, '') };
}

/** Signs the txID as it stands (TronWeb's `trx.sign` would refuse a tampered transaction before the node could). */
const sign = (tx: Tx, role: Parameters<typeof tronPrivateKey>[0] = 'user'): Tx => utils.crypto.signTransaction(tronPrivateKey(role), clone(tx)) as unknown as Tx;

const broadcast = async (tx: Tx) => (await user.trx.sendRawTransaction(tx as never)) as { result?: boolean; code?: string; message?: string; txid?: string };

async function expectRefused(tx: Tx, code: string, label: string): Promise<void> {
  const answer = await broadcast(tx);
  assert.equal(answer.code, code, `${label}: ${JSON.stringify(answer)}`);
  assert.notEqual(answer.result, true, label);
  assert.ok(Buffer.from(answer.message ?? '', 'hex').toString().length > 0, `${label}: the message is hex-encoded text`);
  assert.deepEqual(await user.trx.getUnconfirmedTransactionInfo(tx.txID).catch(() => ({})), {}, `${label}: nothing ran`);
}

const allowance = async () => {
  const answer = await user.transactionBuilder.triggerConstantContract(c.deployment.usdt, 'allowance(address,address)', {}, [{ type: 'address', value: USER() }, { type: 'address', value: c.deployment.usdtHtlc }], USER());
  return BigInt(`0x${answer.constant_result[0]}`);
};

test('a signature by another key, a second signature, or a malformed one is SIGERROR', async () => {
  const tx = await approve(11);
  await expectRefused(sign(tx, 'solver'), 'SIGERROR', 'signed by another key');
  const signed = sign(tx);
  await expectRefused({ ...signed, signature: [...signed.signature!, ...sign(tx, 'solver').signature!] }, 'SIGERROR', 'two signatures');
  await expectRefused({ ...tx, signature: [] }, 'SIGERROR', 'no signature');
  await expectRefused({ ...tx, signature: ['ab'.repeat(64)] }, 'SIGERROR', '64 bytes');
  assert.equal(await allowance(), 0n);
  const ok = await broadcast(signed);
  assert.deepEqual([ok.result, ok.txid], [true, tx.txID]);
  assert.equal(await allowance(), 11n);
});

test('a txID that is not sha256 of the bytes, or JSON that does not match the bytes, is refused even when signed', async () => {
  const tx = await approve(12);
  await expectRefused(sign({ ...tx, txID: 'ab'.repeat(32) }), 'OTHER_ERROR', 'txID not the hash of raw_data');
  const feeChanged = clone(tx);
  feeChanged.raw_data.fee_limit = 200_000_000; // the JSON says one thing, raw_data_hex and txID another
  await expectRefused(sign(feeChanged), 'OTHER_ERROR', 'JSON not matching raw_data_hex');
  const bytesChanged = reencode(feeChanged);
  await expectRefused(sign({ ...bytesChanged, txID: tx.txID }), 'OTHER_ERROR', 'bytes changed, txID stale');
  // The same change, re-encoded and signed afresh, is a valid transaction of its own.
  const ok = await broadcast(sign(bytesChanged));
  assert.equal(ok.result, true, JSON.stringify(ok));
});

test('expired, or more than a day ahead of the head block: TRANSACTION_EXPIRATION_ERROR', async () => {
  const tx = await approve(13);
  const head = (await user.trx.getCurrentBlock()) as unknown as { block_header: { raw_data: { timestamp: number } } };
  const at = head.block_header.raw_data.timestamp;
  const expired = reencode({ ...clone(tx), raw_data: { ...tx.raw_data, expiration: at } });
  await expectRefused(sign(expired), 'TRANSACTION_EXPIRATION_ERROR', 'expiration = head block time');
  const tooFar = reencode({ ...clone(tx), raw_data: { ...tx.raw_data, expiration: at + 24 * 3600_000 + 1 } });
  await expectRefused(sign(tooFar), 'TRANSACTION_EXPIRATION_ERROR', 'a day and 1 ms past the head');
  const stale = reencode({ ...clone(tx), raw_data: { ...tx.raw_data, expiration: at + 1000 } });
  await c.localnet.mine(); // the next block comes at least a second later
  const later = (await user.trx.getCurrentBlock()) as unknown as { block_header: { raw_data: { timestamp: number } } };
  assert.ok(later.block_header.raw_data.timestamp >= at + 1000);
  await expectRefused(sign(stale), 'TRANSACTION_EXPIRATION_ERROR', 'expired while waiting');
});

test('a reference block that is not on this chain: TAPOS_ERROR', async () => {
  const tx = await approve(14);
  const wrongHash = reencode({ ...clone(tx), raw_data: { ...tx.raw_data, ref_block_hash: tx.raw_data.ref_block_hash.replace(/^./, (d) => (d === '0' ? '1' : '0')) } });
  await expectRefused(sign(wrongHash), 'TAPOS_ERROR', 'wrong ref_block_hash');
  const head = await c.localnet.chain.headNumber();
  const future = reencode({ ...clone(tx), raw_data: { ...tx.raw_data, ref_block_bytes: (head + 5).toString(16).padStart(4, '0') } });
  await expectRefused(sign(future), 'TAPOS_ERROR', 'a block not made yet');
  // An older block of this chain is a good reference.
  const old = (await user.trx.getBlockByNumber(head - 2)) as unknown as { blockID: string };
  const older = reencode({ ...clone(tx), raw_data: { ...tx.raw_data, ref_block_bytes: (head - 2).toString(16).padStart(4, '0'), ref_block_hash: old.blockID.slice(16, 32) } });
  assert.equal((await broadcast(sign(older))).result, true);
});

test('the same transaction twice: DUP_TRANSACTION_ERROR, and it ran once', async () => {
  const signed = sign(await approve(15));
  assert.equal((await broadcast(signed)).result, true);
  await c.localnet.mine();
  const again = await broadcast(signed);
  assert.equal(again.code, 'DUP_TRANSACTION_ERROR');
  const info = (await user.trx.getUnconfirmedTransactionInfo(signed.txID)) as unknown as { receipt: { result: string } };
  assert.equal(info.receipt.result, 'SUCCESS');
});

test('fee_limit below the energy the call uses: the transaction is in a block, OUT_OF_ENERGY, nothing changed, at most fee_limit burnt', async () => {
  const before = await allowance();
  const trx = await user.trx.getBalance(USER());
  const feeLimit = 2_300_000; // 2.3 TRX = 23,000 energy at 100 SUN: above the 21,000 and call data a call starts with, below any approve
  const signed = sign(await approve(16_000_000, feeLimit));
  assert.equal((await broadcast(signed)).result, true);
  const info = (await user.trx.getUnconfirmedTransactionInfo(signed.txID)) as unknown as { fee: number; result: string; receipt: { result: string; energy_usage_total: number } };
  assert.deepEqual([info.result, info.receipt.result], ['FAILED', 'OUT_OF_ENERGY']);
  assert.ok(info.fee <= feeLimit && info.fee > 0, `fee ${info.fee}`);
  assert.equal(await user.trx.getBalance(USER()), trx - info.fee);
  assert.equal(await allowance(), before);
  const tx = (await user.trx.getTransaction(signed.txID)) as unknown as { ret: Array<{ contractRet: string }> };
  assert.equal(tx.ret[0]!.contractRet, 'OUT_OF_ENERGY');
  // Enough fee_limit: the same call goes through.
  assert.equal((await broadcast(sign(await approve(16_000_000)))).result, true);
  assert.equal(await allowance(), 16_000_000n);
  // Not even a call's start: refused before it runs.
  await expectRefused(sign(await approve(17, 100_000)), 'CONTRACT_VALIDATE_ERROR', 'fee_limit 0.1 TRX');
});

test('bad input is answered, never a crash: a bad address, a garbage broadcast, an unknown method', async () => {
  const res = await fetch(`${c.localnet.url}/wallet/getaccount`, { method: 'POST', body: JSON.stringify({ address: 'TNotAnAddress' }) });
  assert.equal(res.status, 200);
  assert.match(((await res.json()) as { Error: string }).Error, /^address: .* is not a Tron address/);
  const garbage = await fetch(`${c.localnet.url}/wallet/broadcasttransaction`, { method: 'POST', body: '{"txID": 5}' });
  assert.equal(((await garbage.json()) as { code: string }).code, 'OTHER_ERROR');
  const notJson = await fetch(`${c.localnet.url}/wallet/getnowblock`, { method: 'POST', body: '{' });
  assert.match(((await notJson.json()) as { Error: string }).Error, /not JSON/);
  assert.equal((await fetch(`${c.localnet.url}/wallet/createtransaction`, { method: 'POST', body: '{}' })).status, 404);
  // A constant call needs no caller (TronWeb without an account names none): the zero address calls.
  const noOwner = await fetch(`${c.localnet.url}/wallet/triggerconstantcontract`, { method: 'POST', body: JSON.stringify({ contract_address: c.deployment.usdt, function_selector: 'decimals()' }) });
  assert.deepEqual(((await noOwner.json()) as { constant_result: string[] }).constant_result, [(6).toString(16).padStart(64, '0')]);
  const noContract = await fetch(`${c.localnet.url}/wallet/triggerconstantcontract`, { method: 'POST', body: JSON.stringify({ function_selector: 'decimals()' }) });
  assert.match(((await noContract.json()) as { Error: string }).Error, /^contract_address: /);
  const range = await fetch(`${c.localnet.url}/wallet/getblockbylimitnext`, { method: 'POST', body: JSON.stringify({ startNum: 5, endNum: 500 }) });
  assert.match(((await range.json()) as { Error: string }).Error, /endNum/);
});

test('mining many blocks at once is one jump: a reader sees the head before it or after it, never one between', async () => {
  const head = async () => ((await user.trx.getCurrentBlock()) as unknown as { block_header: { raw_data: { number: number } } }).block_header.raw_data.number;
  const start = await head();
  const seen = new Set<number>();
  let mining = true;
  const mined = c.localnet.mine(300).finally(() => (mining = false));
  while (mining) seen.add(await head());
  await mined;
  seen.add(await head());
  assert.ok(seen.has(start + 300), `the jump's end is seen: ${[...seen].join(', ')}`);
  assert.deepEqual([...seen].filter((n) => n !== start && n !== start + 300), [], 'no head between the first and the last block');
});
