import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSigner, getBase58Decoder, getBase64Encoder, isSolanaError, lamports, type KeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { fundedSigner, rawRpc, sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';
import { until } from '../../../helpers/wait.ts';

const SOL = 1_000_000_000n;
const FEE = 5000n;

describe('Solana localnet: transactions through a kit RPC client', () => {
  // The clock stands still (slotMs 0): each test moves slots itself, so every status is deterministic.
  let h: LocalnetHarness;
  let payer: KeyPairSigner;
  before(async () => {
    h = await startTestLocalnet({ slotMs: 0 });
    payer = await fundedSigner(h.rpc, 100n);
  });
  after(() => h.stop());

  const balance = async (address: KeyPairSigner['address']) => (await h.rpc.getBalance(address, { commitment: 'processed' }).send()).value;

  it('airdrops, and getBalance reads the new balance', async () => {
    const who = await generateKeyPairSigner();
    assert.equal(await balance(who.address), 0n);
    const signature = await h.rpc.requestAirdrop(who.address, lamports(3n * SOL)).send();
    assert.equal(await balance(who.address), 3n * SOL);
    const [status] = (await h.rpc.getSignatureStatuses([signature]).send()).value;
    assert.equal(status?.err, null);
    // Two equal airdrops in one slot both land.
    await h.rpc.requestAirdrop(who.address, lamports(3n * SOL)).send();
    assert.equal(await balance(who.address), 6n * SOL);
  });

  it('runs a signed System transfer whose status moves processed -> confirmed -> finalized as slots pass', async () => {
    const to = await generateKeyPairSigner();
    const before = await balance(payer.address);
    const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: 2n * SOL })]);
    const signature = await sendWire(h.rpc, tx.wire);
    assert.equal(signature, tx.signature);
    assert.equal(await balance(to.address), 2n * SOL);
    assert.equal(await balance(payer.address), before - 2n * SOL - FEE);

    const status = async () => (await h.rpc.getSignatureStatuses([signature]).send()).value[0];
    const sentSlot = h.chain.slot();
    assert.deepEqual({ ...(await status()) }, { slot: BigInt(sentSlot), confirmations: 0n, err: null, status: { Ok: null }, confirmationStatus: 'processed' });
    // getTransaction reads confirmed blocks at the least: not yet.
    assert.equal(await h.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send(), null);

    h.chain.advanceSlots(1);
    assert.equal((await status())?.confirmationStatus, 'confirmed');
    assert.equal((await status())?.confirmations, 1n);
    const confirmed = await h.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    assert.equal(confirmed?.slot, BigInt(sentSlot));
    assert.equal(confirmed?.meta?.fee, FEE);
    assert.equal(confirmed?.meta?.err, null);
    assert.deepEqual(confirmed?.meta?.postBalances.slice(0, 2), [before - 2n * SOL - FEE, 2n * SOL]);
    assert.deepEqual(confirmed?.meta?.logMessages, ['Program 11111111111111111111111111111111 invoke [1]', 'Program 11111111111111111111111111111111 success']);
    assert.equal(confirmed?.version, 0);
    const unversioned = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [signature, { commitment: 'confirmed' }] });
    assert.equal(unversioned.error.code, -32015, 'a v0 transaction needs maxSupportedTransactionVersion, as on a real RPC');
    assert.equal(await h.rpc.getTransaction(signature, { commitment: 'finalized', maxSupportedTransactionVersion: 0, encoding: 'json' }).send(), null);

    h.chain.advanceSlots(30);
    assert.equal((await status())?.confirmationStatus, 'confirmed');
    h.chain.advanceSlots(1);
    assert.deepEqual({ ...(await status()) }, { slot: BigInt(sentSlot), confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'finalized' });
    const finalized = await h.rpc.getTransaction(signature, { commitment: 'finalized', maxSupportedTransactionVersion: 0, encoding: 'base64' }).send();
    assert.equal(finalized?.transaction[0], tx.wire);
  });

  it('executes a transaction sent twice only once, with or without preflight', async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
    const before = await balance(payer.address);
    await sendWire(h.rpc, tx.wire);
    await assert.rejects(sendWire(h.rpc, tx.wire), (err: unknown) => {
      assert.ok(isSolanaError(err));
      assert.equal(err.context.__code, -32002);
      return true;
    });
    const raw = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.wire, { encoding: 'base64' }] });
    assert.equal(raw.error.code, -32002);
    assert.equal(raw.error.message, 'Transaction simulation failed: This transaction has already been processed');
    assert.equal(raw.error.data.err, 'AlreadyProcessed');
    // Without preflight the RPC takes it and the chain drops the repeat.
    assert.equal(await sendWire(h.rpc, tx.wire, true), tx.signature);
    h.chain.advanceSlots(2);
    assert.equal(await sendWire(h.rpc, tx.wire, true), tx.signature);
    assert.equal(await balance(to.address), SOL);
    assert.equal(await balance(payer.address), before - SOL - FEE);
  });

  it('refuses an unknown blockhash and one older than 150 slots with "Blockhash not found"', async () => {
    const to = await generateKeyPairSigner();
    const unknown = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })], 'GfVcyD4kkTrj4bKc7WA9sZCin9JDbdT4Zkd3EittNR1W');
    const raw = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [unknown.wire, { encoding: 'base64' }] });
    assert.equal(raw.error.code, -32002);
    assert.equal(raw.error.message, 'Transaction simulation failed: Blockhash not found');
    assert.equal(raw.error.data.err, 'BlockhashNotFound');

    const { value: latest } = await h.rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    assert.equal(latest.lastValidBlockHeight, BigInt(h.chain.slot() + 150));
    const aging = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })], latest.blockhash);
    h.chain.advanceSlots(150);
    assert.equal((await h.rpc.isBlockhashValid(latest.blockhash, { commitment: 'processed' }).send()).value, true);
    h.chain.advanceSlots(1);
    assert.equal((await h.rpc.isBlockhashValid(latest.blockhash, { commitment: 'processed' }).send()).value, false);
    const expired = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [aging.wire, { encoding: 'base64' }] });
    assert.equal(expired.error.data.err, 'BlockhashNotFound');
    // Skipping preflight, the signature comes back but nothing runs.
    assert.equal(await sendWire(h.rpc, aging.wire, true), aging.signature);
    assert.equal(await balance(to.address), 0n);
    assert.equal((await h.rpc.getSignatureStatuses([aging.signature], { searchTransactionHistory: true }).send()).value[0], null);
  });

  it('refuses a failing transaction in preflight with its error and logs, and records it when preflight is skipped', async () => {
    const poor = await fundedSigner(h.rpc, 1n);
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(h.rpc, poor, [getTransferSolInstruction({ source: poor, destination: to.address, amount: 5n * SOL })]);
    const raw = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.wire, { encoding: 'base64' }] });
    assert.equal(raw.error.code, -32002);
    assert.equal(raw.error.message, 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1');
    assert.deepEqual(raw.error.data.err, { InstructionError: [0, { Custom: 1 }] });
    assert.ok(raw.error.data.logs.some((l: string) => l.includes('insufficient lamports')), JSON.stringify(raw.error.data.logs));
    assert.equal(raw.error.data.unitsConsumed, 150);
    assert.equal(await balance(poor.address), SOL, 'a refused preflight costs nothing');

    await sendWire(h.rpc, tx.wire, true);
    assert.equal(await balance(poor.address), SOL - FEE, 'a failed transaction that lands pays its fee');
    h.chain.advanceSlots(1);
    const [status] = (await h.rpc.getSignatureStatuses([tx.signature]).send()).value;
    assert.deepEqual(status?.err, { InstructionError: [0n, { Custom: 1n }] });
    assert.deepEqual(status?.status, { Err: { InstructionError: [0n, { Custom: 1n }] } });
    const landed = await h.rpc.getTransaction(tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    assert.deepEqual(landed?.meta?.err, { InstructionError: [0n, { Custom: 1n }] });
    assert.equal(landed?.meta?.fee, FEE);
    assert.ok(landed?.meta?.logMessages?.some((l) => l.includes('failed: custom program error: 0x1')));
    assert.deepEqual(landed?.meta?.preBalances.slice(0, 2), [SOL, 0n]);
    assert.deepEqual(landed?.meta?.postBalances.slice(0, 2), [SOL - FEE, 0n]);
  });

  it('takes base58 transactions, verifies signatures for real and answers -32003 to a forged one', async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
    const bytes = new Uint8Array(getBase64Encoder().encode(tx.wire));
    const forged = bytes.slice();
    forged[1] = forged[1]! ^ 1;
    const base58 = getBase58Decoder();
    const refused = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [base58.decode(forged)] });
    assert.deepEqual(refused.error, { code: -32003, message: 'Transaction signature verification failure' });
    // Skipping preflight does not skip the runtime's signature check: nothing lands.
    await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [base58.decode(forged), { skipPreflight: true }] });
    assert.equal(await balance(to.address), 0n);
    const sent = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [base58.decode(bytes), { encoding: 'base58' }] });
    assert.equal(sent.result, tx.signature);
    assert.equal(await balance(to.address), SOL);
  });

  it('simulates without signatures (sigVerify false, replaceRecentBlockhash) and returns post-simulation accounts', async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })], 'GfVcyD4kkTrj4bKc7WA9sZCin9JDbdT4Zkd3EittNR1W');
    const unsigned = new Uint8Array(getBase64Encoder().encode(tx.wire));
    unsigned.fill(0, 1, 65);
    const unsignedBase64 = Buffer.from(unsigned).toString('base64') as typeof tx.wire;
    const { value } = await h.rpc
      .simulateTransaction(unsignedBase64, { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true, accounts: { addresses: [to.address], encoding: 'base64' } })
      .send();
    assert.equal(value.err, null);
    assert.equal(value.unitsConsumed, 150n);
    assert.equal(value.accounts[0]?.lamports, SOL);
    assert.equal(value.replacementBlockhash?.blockhash, (await h.rpc.getLatestBlockhash({ commitment: 'processed' }).send()).value.blockhash);
    assert.equal(await balance(to.address), 0n, 'a simulation changes nothing');
    const stale = await h.rpc.simulateTransaction(unsignedBase64, { encoding: 'base64' }).send();
    assert.equal(stale.value.err, 'BlockhashNotFound');
    const verify = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'simulateTransaction', params: [unsignedBase64, { encoding: 'base64', sigVerify: true }] });
    assert.equal(verify.error.code, -32003);
  });

  it('finds statuses older than the 300-slot status cache only with searchTransactionHistory', async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
    await sendWire(h.rpc, tx.wire);
    h.chain.advanceSlots(300);
    assert.equal((await h.rpc.getSignatureStatuses([tx.signature]).send()).value[0]?.confirmationStatus, 'finalized');
    h.chain.advanceSlots(1);
    assert.equal((await h.rpc.getSignatureStatuses([tx.signature]).send()).value[0], null);
    assert.equal((await h.rpc.getSignatureStatuses([tx.signature], { searchTransactionHistory: true }).send()).value[0]?.confirmationStatus, 'finalized');
  });

  it('prices a message with getFeeForMessage, null once its blockhash is gone', async () => {
    const to = await generateKeyPairSigner();
    const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
    const message = Buffer.from(getBase64Encoder().encode(tx.wire)).subarray(65).toString('base64');
    const fee = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getFeeForMessage', params: [message, { commitment: 'processed' }] });
    assert.equal(fee.result.value, 5000);
    h.chain.advanceSlots(151);
    const gone = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getFeeForMessage', params: [message, { commitment: 'processed' }] });
    assert.equal(gone.result.value, null);
  });
});

describe('Solana localnet: the slot clock running on its own', () => {
  it('moves a confirmed transfer to finalized as 10 ms slots pass', async () => {
    const h = await startTestLocalnet({ slotMs: 10 });
    try {
      const payer = await fundedSigner(h.rpc);
      const to = await generateKeyPairSigner();
      const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
      const signature = await sendWire(h.rpc, tx.wire);
      const seen = new Set<string>();
      await until('finalized', async () => {
        const [status] = (await h.rpc.getSignatureStatuses([signature]).send()).value;
        if (status?.confirmationStatus) seen.add(status.confirmationStatus);
        return status?.confirmationStatus === 'finalized' ? true : undefined;
      }, 10_000, 5);
      assert.ok(seen.has('confirmed'));
      const slot = Number(await h.rpc.getSlot({ commitment: 'processed' }).send());
      const finalizedSlot = Number(await h.rpc.getSlot({ commitment: 'finalized' }).send());
      assert.ok(slot - finalizedSlot >= 31 && slot - finalizedSlot <= 33, `${slot} vs ${finalizedSlot}`);
    } finally {
      await h.stop();
    }
  });
});
