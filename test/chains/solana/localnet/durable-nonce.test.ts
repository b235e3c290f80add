import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingDurableNonce,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
  type Nonce,
} from '@solana/kit';
import { getCreateAccountInstruction, getInitializeNonceAccountInstruction, getNonceDecoder, getNonceSize, getTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { fundedSigner, rawRpc, sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';

describe('Solana localnet: durable nonce transactions', () => {
  let h: LocalnetHarness;
  let payer: KeyPairSigner;
  let nonceAccount: KeyPairSigner;
  before(async () => {
    h = await startTestLocalnet({ slotMs: 0 });
    payer = await fundedSigner(h.rpc);
    nonceAccount = await generateKeyPairSigner();
    const space = BigInt(getNonceSize());
    const rent = await h.rpc.getMinimumBalanceForRentExemption(space).send();
    const create = await signedTransaction(h.rpc, payer, [
      getCreateAccountInstruction({ payer, newAccount: nonceAccount, lamports: rent, space, programAddress: SYSTEM_PROGRAM_ADDRESS }),
      getInitializeNonceAccountInstruction({ nonceAccount: nonceAccount.address, nonceAuthority: payer.address }),
    ]);
    await sendWire(h.rpc, create.wire);
  });
  after(() => h.stop());

  const storedNonce = async () => {
    const { value } = await h.rpc.getAccountInfo(nonceAccount.address, { encoding: 'base64', commitment: 'processed' }).send();
    assert.ok(value);
    return getNonceDecoder().decode(Buffer.from(value.data[0], 'base64')).blockhash as string as Nonce;
  };

  const nonceTransfer = async (nonce: Nonce, to: Address) =>
    signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingDurableNonce({ nonce, nonceAccountAddress: nonceAccount.address, nonceAuthorityAddress: payer.address }, m),
        (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: to, amount: 1_000_000n })], m),
      ),
    );

  it('runs a transaction on the stored nonce long after its blockhash expired, once, and advances the nonce', async () => {
    const nonce = await storedNonce();
    const to = await generateKeyPairSigner();
    const signed = await nonceTransfer(nonce, to.address);
    h.chain.advanceSlots(200);
    await sendWire(h.rpc, getBase64EncodedWireTransaction(signed));
    assert.equal((await h.rpc.getBalance(to.address, { commitment: 'processed' }).send()).value, 1_000_000n);
    assert.notEqual(await storedNonce(), nonce, 'the nonce advanced');
    const [status] = (await h.rpc.getSignatureStatuses([getSignatureFromTransaction(signed)]).send()).value;
    assert.equal(status?.err, null);
    // The used nonce is gone: the same transaction again is refused.
    const again = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [getBase64EncodedWireTransaction(signed), { encoding: 'base64' }] });
    assert.equal(again.error.code, -32002);
    assert.equal(again.error.data.err, 'BlockhashNotFound');
    assert.equal((await h.rpc.getBalance(to.address, { commitment: 'processed' }).send()).value, 1_000_000n);
  });

  it('refuses a transaction naming a nonce the account no longer holds', async () => {
    const stale = await storedNonce();
    const first = await nonceTransfer(stale, (await generateKeyPairSigner()).address);
    h.chain.advanceSlots(1);
    await sendWire(h.rpc, getBase64EncodedWireTransaction(first));
    const second = await nonceTransfer(stale, (await generateKeyPairSigner()).address);
    const refused = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [getBase64EncodedWireTransaction(second), { encoding: 'base64' }] });
    assert.equal(refused.error.data.err, 'BlockhashNotFound');
  });
});
