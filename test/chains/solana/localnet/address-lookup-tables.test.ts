import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { fundedSigner, sendWire, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';

const LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');

/** An address lookup table account: the 56-byte meta (type 1, never deactivated, no authority), then the addresses. */
function lookupTableData(addresses: readonly Address[]): Uint8Array {
  const data = new Uint8Array(56 + 32 * addresses.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  view.setBigUint64(4, 0xffff_ffff_ffff_ffffn, true);
  addresses.forEach((a, i) => data.set(getAddressEncoder().encode(a), 56 + 32 * i));
  return data;
}

describe('Solana localnet: v0 transactions with address lookup tables', () => {
  let h: LocalnetHarness;
  let payer: KeyPairSigner;
  before(async () => {
    h = await startTestLocalnet({ slotMs: 0 });
    payer = await fundedSigner(h.rpc);
  });
  after(() => h.stop());

  it('runs them, reports loadedAddresses and indexes the loaded keys', async () => {
    const recipient = await generateKeyPairSigner();
    const table = (await generateKeyPairSigner()).address;
    const data = lookupTableData([recipient.address]);
    h.chain.svm.setAccount({ address: table, lamports: lamports(10_000_000n), programAddress: LOOKUP_TABLE_PROGRAM, executable: false, data, space: BigInt(data.length) });
    h.chain.advanceSlots(1);
    const { value: latest } = await h.rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    const message = compressTransactionMessageUsingAddressLookupTables(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
        (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 1_000_000_000n })], m),
      ),
      { [table]: [recipient.address] },
    );
    const signed = await signTransactionMessageWithSigners(message);
    const signature = getSignatureFromTransaction(signed);
    await sendWire(h.rpc, getBase64EncodedWireTransaction(signed));
    h.chain.advanceSlots(1);

    assert.equal((await h.rpc.getBalance(recipient.address).send()).value, 1_000_000_000n);
    const tx = await h.rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    assert.ok(tx);
    assert.deepEqual(tx.meta?.loadedAddresses, { writable: [recipient.address], readonly: [] });
    assert.ok(!tx.transaction.message.accountKeys.includes(recipient.address), 'the recipient comes from the table, not the static keys');
    assert.equal(tx.version, 0);
    assert.ok('addressTableLookups' in tx.transaction.message);
    assert.deepEqual(tx.transaction.message.addressTableLookups, [{ accountKey: table, writableIndexes: [0], readonlyIndexes: [] }]);
    // Balances cover static then loaded keys: the recipient is last.
    assert.equal(tx.meta?.postBalances[tx.meta.postBalances.length - 1], 1_000_000_000n);
    const listed = await h.rpc.getSignaturesForAddress(recipient.address, { commitment: 'confirmed' }).send();
    assert.deepEqual(listed.map((s) => s.signature), [signature]);
  });

  it('refuses a lookup table that does not exist with -32602, as the RPC sanitize does', async () => {
    const recipient = await generateKeyPairSigner();
    const missingTable = (await generateKeyPairSigner()).address;
    const { value: latest } = await h.rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    const signed = await signTransactionMessageWithSigners(
      compressTransactionMessageUsingAddressLookupTables(
        pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
          (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 1n })], m),
        ),
        { [missingTable]: [recipient.address] },
      ),
    );
    await assert.rejects(sendWire(h.rpc, getBase64EncodedWireTransaction(signed), true), (err: any) => {
      assert.equal(err.context.__code, -32602);
      assert.match(err.context.__serverMessage ?? err.message, /address table account that doesn't exist|invalid/i);
      return true;
    });
  });
});
