/**
 * The native SOL HTLC program, built from contracts/solana/native_swaps.c, deployed through the
 * Upgradeable Loader into LiteSVM and driven with real signed transactions.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AccountRole, generateKeyPairSigner, lamports, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import {
  nativeInitiateInstruction,
  nativeInstantRefundInstruction,
  nativeRedeemInstruction,
  nativeRefundInstruction,
} from '../../../../src/chains/solana/instructions.ts';
import { decodeSwapEvents } from '../../../../src/chains/solana/events.ts';
import { findProgramAddress } from '../../../../src/chains/solana/pda.ts';
import { ANCHOR_ERRORS, NATIVE_SWAP_ERRORS, REDEEM_DISCRIMINATOR, swapAccountSeeds } from '../../../../src/chains/solana/program.ts';
import { decodeNativeSwapAccount, NATIVE_SWAP_ACCOUNT_BYTES } from '../../../../src/chains/solana/swap-account.ts';
import { solanaProgramsForSuite } from '../../../helpers/solana.ts';
import { World } from './svm.ts';

const AMOUNT = 2_500_000_000n;
const EXPIRES_IN_SLOTS = 100n;

interface Swap {
  initiator: KeyPairSigner;
  redeemer: KeyPairSigner;
  secret: Uint8Array;
  secretHash: Uint8Array;
  swapAccount: Address;
  expirySlot: bigint;
}

const built = await solanaProgramsForSuite();

describe('native SOL HTLC program (LiteSVM, deployed through the Upgradeable Loader)', () => {
  let world: World;
  let program: Address;
  let swapRent: bigint;

  before(async () => {
    world = await World.create(built);
    program = world.programs.native_swaps;
    swapRent = world.rent(BigInt(NATIVE_SWAP_ACCOUNT_BYTES));
  });

  after(() => {
    if (!world) return;
    console.log('native_swaps compute units:', Object.fromEntries([...world.computeUnits].filter(([k]) => k.startsWith('native'))));
  });

  async function initiate(options: { redeemer?: KeyPairSigner; initiator?: KeyPairSigner; label?: string } = {}): Promise<Swap> {
    const initiator = options.initiator ?? (await world.funded());
    const redeemer = options.redeemer ?? (await world.funded(1n));
    const secret = Uint8Array.from(randomBytes(32));
    const secretHash = Uint8Array.from(createHash('sha256').update(secret).digest());
    const [swapAccount] = await findProgramAddress(program, swapAccountSeeds('native', initiator.address, secretHash));
    const before = world.balance(initiator.address);
    const outcome = await world.succeed(
      options.label ?? 'native initiate',
      [await nativeInitiateInstruction({ program, initiator: initiator.address, args: { amount: AMOUNT, expiresInSlots: EXPIRES_IN_SLOTS, redeemer: redeemer.address, secretHash } })],
      [initiator],
    );
    const expirySlot = world.slot() + EXPIRES_IN_SLOTS;
    assert.equal(world.balance(initiator.address), before - AMOUNT - swapRent, 'the initiator pays the amount and the rent, not the fee');
    assert.equal(world.balance(swapAccount), AMOUNT + swapRent);
    const [event] = decodeSwapEvents('native', program, outcome.logs);
    assert.deepEqual(event, { name: 'Initiated', amount: AMOUNT, expiresInSlots: EXPIRES_IN_SLOTS, initiator: initiator.address, redeemer: redeemer.address, secretHash });
    return { initiator, redeemer, secret, secretHash, swapAccount, expirySlot };
  }

  const ref = (swap: Swap) => ({ program, initiator: swap.initiator.address, secretHash: swap.secretHash });

  test('initiate escrows the lamports in the swap PDA and stores the swap as the IDL lays it out', async () => {
    const swap = await initiate();
    const data = world.data(swap.swapAccount);
    assert.equal(data.length, NATIVE_SWAP_ACCOUNT_BYTES);
    assert.deepEqual(decodeNativeSwapAccount(data), {
      amountLamports: AMOUNT,
      expirySlot: swap.expirySlot,
      initiator: swap.initiator.address,
      redeemer: swap.redeemer.address,
      secretHash: swap.secretHash,
    });
    assert.equal(world.owner(swap.swapAccount), program);
  });

  test('redeem pays the redeemer, returns the rent to the initiator, closes the swap and logs the secret', async () => {
    const swap = await initiate();
    const sender = await world.funded(1n); // anyone may send it
    const [initiatorBefore, redeemerBefore, senderBefore] = [swap.initiator.address, swap.redeemer.address, sender.address].map((a) => world.balance(a));
    const outcome = await world.succeed(
      'native redeem',
      [await nativeRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret })],
      [],
      sender,
    );
    assert.equal(world.balance(swap.redeemer.address), redeemerBefore! + AMOUNT);
    assert.equal(world.balance(swap.initiator.address), initiatorBefore! + swapRent);
    assert.equal(world.balance(sender.address), senderBefore! - 5000n);
    assert.equal(world.exists(swap.swapAccount), false);
    assert.deepEqual(decodeSwapEvents('native', program, outcome.logs), [{ name: 'Redeemed', initiator: swap.initiator.address, secret: swap.secret }]);
    const again = await nativeRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    await world.refuse('a second redeem', [again], ANCHOR_ERRORS.AccountNotInitialized);
  });

  test('initiate still works when someone sent lamports to the swap address first (top up, allocate, assign)', async () => {
    // A system account needs the rent-exempt minimum of 0 bytes, so a donation is at least that.
    for (const donated of [world.rent(0n), swapRent + 5n]) {
      const initiator = await world.funded();
      const redeemer = await generateKeyPairSigner();
      const secret = Uint8Array.from(randomBytes(32));
      const secretHash = Uint8Array.from(createHash('sha256').update(secret).digest());
      const [swapAccount] = await findProgramAddress(program, swapAccountSeeds('native', initiator.address, secretHash));
      world.svm.airdrop(swapAccount, lamports(donated));
      assert.equal(world.balance(swapAccount), donated);
      const before = world.balance(initiator.address);
      const instruction = await nativeInitiateInstruction({ program, initiator: initiator.address, args: { amount: AMOUNT, expiresInSlots: EXPIRES_IN_SLOTS, redeemer: redeemer.address, secretHash } });
      await world.succeed('native initiate (pre-funded address)', [instruction], [initiator]);
      const topUp = donated < swapRent ? swapRent - donated : 0n;
      assert.equal(world.balance(initiator.address), before - AMOUNT - topUp);
      assert.equal(world.balance(swapAccount), AMOUNT + (donated < swapRent ? swapRent : donated));
      assert.equal(world.owner(swapAccount), program);
      assert.equal(decodeNativeSwapAccount(world.data(swapAccount)).amountLamports, AMOUNT);
      await world.succeed('native redeem (pre-funded address)', [await nativeRedeemInstruction({ program, initiator: initiator.address, secretHash, redeemer: redeemer.address, secret })]);
      assert.equal(world.balance(redeemer.address), AMOUNT);
      assert.equal(world.balance(initiator.address), before - AMOUNT - topUp + (donated < swapRent ? swapRent : donated));
    }
  });

  test('redeem refuses a wrong secret, and a secret of 31 or 33 bytes', async () => {
    const swap = await initiate();
    const redeem = await nativeRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    await world.refuse('wrong secret', [{ ...redeem, data: Uint8Array.from([...REDEEM_DISCRIMINATOR, ...randomBytes(32)]) }], NATIVE_SWAP_ERRORS.InvalidSecret);
    await world.refuse('31-byte secret', [{ ...redeem, data: Uint8Array.from([...REDEEM_DISCRIMINATOR, ...swap.secret.subarray(0, 31)]) }], ANCHOR_ERRORS.InstructionDidNotDeserialize);
    await world.refuse('33-byte secret', [{ ...redeem, data: Uint8Array.from([...REDEEM_DISCRIMINATOR, ...swap.secret, 0]) }], ANCHOR_ERRORS.InstructionDidNotDeserialize);
    await assert.rejects(nativeRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret.subarray(1) }), /secret: must be 32 bytes, got 31/);
    assert.equal(world.balance(swap.swapAccount), AMOUNT + swapRent, 'nothing moved');
  });

  test('redeem refuses another initiator or redeemer account, and duplicated accounts in their places', async () => {
    const swap = await initiate();
    const stranger = await generateKeyPairSigner();
    const redeem = await nativeRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    const withAccount = (index: number, address: Address): Instruction => ({
      ...redeem,
      accounts: redeem.accounts!.map((a, i) => (i === index ? { ...a, address } : a)),
    });
    await world.refuse('other initiator', [withAccount(1, stranger.address)], NATIVE_SWAP_ERRORS.InvalidInitiator);
    await world.refuse('other redeemer', [withAccount(2, stranger.address)], NATIVE_SWAP_ERRORS.InvalidRedeemer);
    await world.refuse('redeemer in the initiator slot', [withAccount(1, swap.redeemer.address)], NATIVE_SWAP_ERRORS.InvalidInitiator);
    await world.refuse('initiator in the redeemer slot', [withAccount(2, swap.initiator.address)], NATIVE_SWAP_ERRORS.InvalidRedeemer);
    await world.refuse('swap account as redeemer', [withAccount(2, swap.swapAccount)], NATIVE_SWAP_ERRORS.InvalidRedeemer);
    await world.refuse('not writable', [{ ...redeem, accounts: redeem.accounts!.map((a, i) => (i === 0 ? { ...a, role: AccountRole.READONLY } : a)) }], ANCHOR_ERRORS.ConstraintMut);
    await world.refuse('too few accounts', [{ ...redeem, accounts: redeem.accounts!.slice(0, 2) }], ANCHOR_ERRORS.AccountNotEnoughKeys);
    assert.equal(world.balance(swap.swapAccount), AMOUNT + swapRent);
  });

  test('a swap whose initiator is also its redeemer pays once when the same account fills both places', async () => {
    const initiator = await world.funded();
    const swap = await initiate({ initiator, redeemer: initiator });
    const before = world.balance(initiator.address);
    await world.succeed('native redeem (initiator = redeemer)', [await nativeRedeemInstruction({ ...ref(swap), redeemer: initiator.address, secret: swap.secret })]);
    assert.equal(world.balance(initiator.address), before + AMOUNT + swapRent);
    assert.equal(world.exists(swap.swapAccount), false);
  });

  test('a copy of a swap account owned by another program is refused', async () => {
    const swap = await initiate();
    const copy = (await generateKeyPairSigner()).address;
    const original = world.svm.getAccount(swap.swapAccount);
    assert.ok(original.exists);
    for (const owner of [world.programs.spl_swaps, '11111111111111111111111111111111' as Address]) {
      world.svm.setAccount({ ...original, address: copy, programAddress: owner, lamports: lamports(AMOUNT + swapRent) });
      const redeem = await nativeRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
      const forged = { ...redeem, accounts: redeem.accounts!.map((a, i) => (i === 0 ? { ...a, address: copy } : a)) };
      await world.refuse(`copy owned by ${owner}`, [forged], ANCHOR_ERRORS.AccountOwnedByWrongProgram);
    }
    const refund = await nativeRefundInstruction(ref(swap));
    const uninitialized = (await generateKeyPairSigner()).address;
    await world.refuse('uninitialized swap account', [{ ...refund, accounts: refund.accounts!.map((a, i) => (i === 0 ? { ...a, address: uninitialized } : a)) }], ANCHOR_ERRORS.AccountNotInitialized);
  });

  test('refund is refused up to the expiry slot and pays the initiator just after it, sent by anyone', async () => {
    const swap = await initiate();
    const refund = [await nativeRefundInstruction(ref(swap))];
    await world.refuse('refund before expiry', refund, NATIVE_SWAP_ERRORS.RefundBeforeExpiry);
    world.svm.warpToSlot(swap.expirySlot);
    await world.refuse('refund at the expiry slot', refund, NATIVE_SWAP_ERRORS.RefundBeforeExpiry);
    world.svm.warpToSlot(swap.expirySlot + 1n);
    const before = world.balance(swap.initiator.address);
    const outcome = await world.succeed('native refund', refund);
    assert.equal(world.balance(swap.initiator.address), before + AMOUNT + swapRent);
    assert.equal(world.exists(swap.swapAccount), false);
    assert.deepEqual(decodeSwapEvents('native', program, outcome.logs), [{ name: 'Refunded', initiator: swap.initiator.address, secretHash: swap.secretHash }]);
  });

  test('instant refund needs the redeemer signature and pays the initiator at once', async () => {
    const swap = await initiate();
    const instant = await nativeInstantRefundInstruction({ ...ref(swap), redeemer: swap.redeemer.address });
    const unsigned = { ...instant, accounts: instant.accounts!.map((a, i) => (i === 2 ? { ...a, role: AccountRole.READONLY } : a)) };
    await world.refuse('instant refund without the redeemer signature', [unsigned], ANCHOR_ERRORS.AccountNotSigner);
    const stranger = await world.funded(1n);
    const byStranger = { ...instant, accounts: instant.accounts!.map((a, i) => (i === 2 ? { ...a, address: stranger.address } : a)) };
    await world.refuse('instant refund signed by another', [byStranger], NATIVE_SWAP_ERRORS.InvalidRedeemer, [stranger]);
    const before = world.balance(swap.initiator.address);
    const outcome = await world.succeed('native instant_refund', [instant], [swap.redeemer]);
    assert.equal(world.balance(swap.initiator.address), before + AMOUNT + swapRent);
    assert.equal(world.exists(swap.swapAccount), false);
    assert.deepEqual(decodeSwapEvents('native', program, outcome.logs), [{ name: 'InstantRefunded', initiator: swap.initiator.address, secretHash: swap.secretHash }]);
  });

  test('a second initiate of an open swap fails in the System program (account already in use)', async () => {
    const initiator = await world.funded();
    const swap = await initiate({ initiator });
    const again = await nativeInitiateInstruction({ program, initiator: initiator.address, args: { amount: 1n, expiresInSlots: 5n, redeemer: swap.redeemer.address, secretHash: swap.secretHash } });
    const outcome = await world.send([again], [initiator]);
    assert.equal(outcome.ok, false);
    assert.equal(outcome.customError, 0, 'SystemError::AccountAlreadyInUse');
    assert.ok(outcome.logs.some((l) => l.includes('already in use')), outcome.logs.join('\n'));
    assert.deepEqual(decodeNativeSwapAccount(world.data(swap.swapAccount)).amountLamports, AMOUNT, 'the open swap is untouched');
  });

  test('initiate refuses a swap account that is not the PDA of its initiator and secret hash, and a missing signature', async () => {
    const initiator = await world.funded();
    const redeemer = await generateKeyPairSigner();
    const secretHash = Uint8Array.from(randomBytes(32));
    const good = await nativeInitiateInstruction({ program, initiator: initiator.address, args: { amount: AMOUNT, expiresInSlots: 10n, redeemer: redeemer.address, secretHash } });
    const [otherPda] = await findProgramAddress(program, swapAccountSeeds('native', redeemer.address, secretHash));
    await world.refuse('swap account of other seeds', [{ ...good, accounts: good.accounts!.map((a, i) => (i === 0 ? { ...a, address: otherPda } : a)) }], ANCHOR_ERRORS.ConstraintSeeds, [initiator]);
    await world.refuse('initiator not signing', [{ ...good, accounts: good.accounts!.map((a, i) => (i === 1 ? { ...a, role: AccountRole.WRITABLE } : a)) }], ANCHOR_ERRORS.AccountNotSigner);
  });

  test('unknown and missing instruction discriminators are refused with Anchor codes', async () => {
    const swap = await initiate();
    const refund = await nativeRefundInstruction(ref(swap));
    await world.refuse('unknown instruction', [{ ...refund, data: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]) }], ANCHOR_ERRORS.InstructionFallbackNotFound);
    await world.refuse('no instruction', [{ ...refund, data: Uint8Array.from([1, 2, 3]) }], ANCHOR_ERRORS.InstructionMissing);
  });
});
