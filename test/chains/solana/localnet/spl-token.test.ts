import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSigner, getAddressEncoder, getBase58Decoder, lamports, type Address, type KeyPairSigner, type Signature } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { solanaBalance } from '../../../../src/chains/solana/balances.ts';
import { solanaRpc } from '../../../../src/chains/solana/rpc.ts';
import { fundedSigner, rawRpc, sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';

describe('Solana localnet: SPL Token through a kit RPC client', () => {
  let h: LocalnetHarness;
  let payer: KeyPairSigner;
  let mint: KeyPairSigner;
  let alice: KeyPairSigner;
  let bob: KeyPairSigner;
  let aliceAta: Address;
  let bobAta: Address;
  let transferSignature: Signature;

  before(async () => {
    h = await startTestLocalnet({ slotMs: 0 });
    payer = await fundedSigner(h.rpc);
    mint = await generateKeyPairSigner();
    alice = await generateKeyPairSigner();
    bob = await generateKeyPairSigner();
    const space = BigInt(getMintSize());
    const rent = await h.rpc.getMinimumBalanceForRentExemption(space).send();
    const createMint = await signedTransaction(h.rpc, payer, [
      getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress: TOKEN_PROGRAM_ADDRESS }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
    ]);
    await sendWire(h.rpc, createMint.wire);
    [aliceAta] = await findAssociatedTokenPda({ owner: alice.address, mint: mint.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    [bobAta] = await findAssociatedTokenPda({ owner: bob.address, mint: mint.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const accounts = await signedTransaction(h.rpc, payer, [
      getCreateAssociatedTokenIdempotentInstruction({ payer, ata: aliceAta, owner: alice.address, mint: mint.address }),
      getCreateAssociatedTokenIdempotentInstruction({ payer, ata: bobAta, owner: bob.address, mint: mint.address }),
      getMintToInstruction({ mint: mint.address, token: aliceAta, mintAuthority: payer, amount: 5_250_000n }),
    ]);
    await sendWire(h.rpc, accounts.wire);
    await h.rpc.requestAirdrop(alice.address, lamports(1_000_000_000n)).send();
    const transfer = await signedTransaction(h.rpc, alice, [
      getTransferCheckedInstruction({ source: aliceAta, mint: mint.address, destination: bobAta, authority: alice, amount: 1_500_000n, decimals: 6 }),
    ]);
    transferSignature = await sendWire(h.rpc, transfer.wire);
    h.chain.advanceSlots(1);
  });
  after(() => h.stop());

  it('reads token balances with the mint decimals (getTokenAccountBalance)', async () => {
    const alices = await h.rpc.getTokenAccountBalance(aliceAta, { commitment: 'confirmed' }).send();
    assert.deepEqual(alices.value, { amount: '3750000', decimals: 6, uiAmount: 3.75, uiAmountString: '3.75' });
    const bobs = await h.rpc.getTokenAccountBalance(bobAta).send();
    assert.deepEqual(bobs.value, { amount: '1500000', decimals: 6, uiAmount: 1.5, uiAmountString: '1.5' });
    const notToken = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getTokenAccountBalance', params: [mint.address] });
    assert.equal(notToken.error.code, -32602);
    const missing = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getTokenAccountBalance', params: [(await generateKeyPairSigner()).address] });
    assert.equal(missing.error.message, 'Invalid param: could not find account');
  });

  it('records pre- and post-token balances in getTransaction', async () => {
    const tx = await h.rpc.getTransaction(transferSignature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    assert.ok(tx?.meta);
    const byOwner = (list: readonly { owner?: string; uiTokenAmount: { amount: string } }[]) => Object.fromEntries(list.map((b) => [b.owner, b.uiTokenAmount.amount]));
    assert.deepEqual(byOwner(tx.meta.preTokenBalances ?? []), { [alice.address]: '5250000', [bob.address]: '0' });
    assert.deepEqual(byOwner(tx.meta.postTokenBalances ?? []), { [alice.address]: '3750000', [bob.address]: '1500000' });
    const bobsPost = tx.meta.postTokenBalances?.find((b) => b.owner === bob.address);
    assert.equal(bobsPost?.mint, mint.address);
    assert.equal(bobsPost?.programId, TOKEN_PROGRAM_ADDRESS);
    assert.equal(bobsPost?.uiTokenAmount.uiAmountString, '1.5');
    assert.equal(tx.transaction.message.accountKeys[Number(bobsPost?.accountIndex)], bobAta);
  });

  it('filters getProgramAccounts by dataSize and memcmp (base58 and base64)', async () => {
    const all = await h.rpc.getProgramAccounts(TOKEN_PROGRAM_ADDRESS, { encoding: 'base64' }).send();
    assert.ok(all.length >= 3, `${all.length} accounts`);
    const tokenAccounts = await h.rpc.getProgramAccounts(TOKEN_PROGRAM_ADDRESS, { encoding: 'base64', filters: [{ dataSize: 165n }] }).send();
    assert.deepEqual(tokenAccounts.map((a) => a.pubkey).sort(), [aliceAta, bobAta].sort());
    const mintBytes = getBase58Decoder().decode(getAddressEncoder().encode(mint.address));
    const ofMint = await h.rpc
      .getProgramAccounts(TOKEN_PROGRAM_ADDRESS, { encoding: 'base64', filters: [{ dataSize: 165n }, { memcmp: { offset: 0n, bytes: mintBytes as never, encoding: 'base58' } }] })
      .send();
    assert.equal(ofMint.length, 2);
    const bobOwner = Buffer.from(getAddressEncoder().encode(bob.address)).toString('base64');
    const bobs = await h.rpc
      .getProgramAccounts(TOKEN_PROGRAM_ADDRESS, { encoding: 'base64', filters: [{ memcmp: { offset: 32n, bytes: bobOwner as never, encoding: 'base64' } }] })
      .send();
    assert.deepEqual(bobs.map((a) => a.pubkey), [bobAta]);
    assert.equal(bobs[0]?.account.owner, TOKEN_PROGRAM_ADDRESS);
    assert.equal(Buffer.from(bobs[0].account.data[0], 'base64').length, 165);
    const sliced = await h.rpc
      .getProgramAccounts(TOKEN_PROGRAM_ADDRESS, { encoding: 'base64', dataSlice: { offset: 64, length: 8 }, withContext: true, filters: [{ dataSize: 165n }, { memcmp: { offset: 32n, bytes: bobOwner as never, encoding: 'base64' } }] })
      .send();
    assert.equal(Buffer.from(sliced.value[0]!.account.data[0], 'base64').readBigUInt64LE(0), 1_500_000n);
    const none = await h.rpc.getProgramAccounts(TOKEN_PROGRAM_ADDRESS, { encoding: 'base64', filters: [{ dataSize: 7n }] }).send();
    assert.deepEqual(none, []);
  });

  it("lists an owner's token accounts by mint or by program (getTokenAccountsByOwner)", async () => {
    const byMint = await h.rpc.getTokenAccountsByOwner(bob.address, { mint: mint.address }, { encoding: 'base64' }).send();
    assert.deepEqual(byMint.value.map((a) => a.pubkey), [bobAta]);
    assert.equal(Buffer.from(byMint.value[0]!.account.data[0], 'base64').readBigUInt64LE(64), 1_500_000n);
    const byProgram = await h.rpc.getTokenAccountsByOwner(alice.address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' }).send();
    assert.deepEqual(byProgram.value.map((a) => a.pubkey), [aliceAta]);
    const nobody = await h.rpc.getTokenAccountsByOwner(payer.address, { mint: mint.address }, { encoding: 'base64' }).send();
    assert.deepEqual(nobody.value, []);
  });

  it('reads accounts with getAccountInfo and getMultipleAccounts (null for a missing one)', async () => {
    const nobody = await generateKeyPairSigner();
    const { value } = await h.rpc.getMultipleAccounts([mint.address, nobody.address, bobAta], { encoding: 'base64' }).send();
    assert.equal(value.length, 3);
    assert.equal(value[1], null);
    assert.equal(value[0]?.owner, TOKEN_PROGRAM_ADDRESS);
    assert.equal(Buffer.from(value[0].data[0], 'base64')[44], 6, 'mint decimals');
    assert.equal(value[2]?.space, 165n);
    const info = await h.rpc.getAccountInfo(mint.address, { encoding: 'base64' }).send();
    assert.equal(info.value?.lamports, await h.rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send());
    assert.equal((await h.rpc.getAccountInfo(nobody.address, { encoding: 'base64' }).send()).value, null);
  });

  it("solanaBalance (the solver's balances, hashlock swap) reads lamports and token units with the slot they were read at", async () => {
    const rpc = solanaRpc(h.chain.rpcUrl);
    h.chain.advanceSlots(3);
    // Slots move only when told here (slotMs 0): every read below is at the slot this one names.
    const { context, value: lamportsOfAlice } = await h.rpc.getBalance(alice.address, { commitment: 'confirmed' }).send();
    const slot = context.slot;
    assert.ok(slot > 3n);
    assert.deepEqual(await solanaBalance(rpc, alice.address, undefined), { balance: lamportsOfAlice, slot });
    assert.deepEqual(await solanaBalance(rpc, bob.address, mint.address), { balance: 1_500_000n, slot });
    assert.deepEqual(await solanaBalance(rpc, payer.address, mint.address), { balance: 0n, slot }, 'no token account holds nothing');
  });
});
