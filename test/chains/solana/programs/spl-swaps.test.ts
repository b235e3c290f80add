/**
 * The SPL token HTLC program, built from contracts/solana/spl_swaps.c, deployed through the
 * Upgradeable Loader into LiteSVM and driven with real signed transactions (gasless: a sponsor pays
 * the fees and the rent, the initiator signs for its tokens).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AccountRole, generateKeyPairSigner, lamports, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import {
  splInitiateInstruction,
  splInstantRefundInstruction,
  splRedeemInstruction,
  splRefundInstruction,
} from '../../../../src/chains/solana/instructions.ts';
import { decodeSwapEvents } from '../../../../src/chains/solana/events.ts';
import { findProgramAddress } from '../../../../src/chains/solana/pda.ts';
import {
  ANCHOR_ERRORS,
  IDENTITY_PDA_SEEDS,
  REDEEM_DISCRIMINATOR,
  SPL_SWAP_ERRORS,
  swapAccountSeeds,
  tokenVaultSeeds,
} from '../../../../src/chains/solana/program.ts';
import { decodeSplSwapAccount, SPL_SWAP_ACCOUNT_WITH_MINT_BYTES } from '../../../../src/chains/solana/swap-account.ts';
import { solanaProgramsForSuite } from '../../../helpers/solana.ts';
import { FEE_PER_SIGNATURE, World } from './svm.ts';

const AMOUNT = 1_234_567n;
const EXPIRES_IN_SLOTS = 50n;
const TOKEN_ACCOUNT_BYTES = 165n;

interface Swap {
  initiator: KeyPairSigner;
  redeemer: KeyPairSigner;
  sponsor: KeyPairSigner;
  mint: Address;
  initiatorTokens: Address;
  redeemerTokens: Address;
  secret: Uint8Array;
  secretHash: Uint8Array;
  swapData: Address;
  vault: Address;
  expirySlot: bigint;
}

const built = await solanaProgramsForSuite();

describe('SPL token HTLC program (LiteSVM, deployed through the Upgradeable Loader)', () => {
  let world: World;
  let program: Address;
  let identityPda: Address;
  let swapRent: bigint;
  let mint: Address;
  let otherMint: Address;

  before(async () => {
    world = await World.create(built);
    program = world.programs.spl_swaps;
    [identityPda] = await findProgramAddress(program, IDENTITY_PDA_SEEDS);
    swapRent = world.rent(BigInt(SPL_SWAP_ACCOUNT_WITH_MINT_BYTES));
    mint = (await world.createMint()).mint;
    otherMint = (await world.createMint()).mint;
  });

  after(() => {
    if (!world) return;
    console.log('spl_swaps compute units:', Object.fromEntries([...world.computeUnits].filter(([k]) => k.startsWith('spl'))));
  });

  async function initiate(options: { mint?: Address; redeemer?: KeyPairSigner; label?: string; destinationData?: boolean } = {}): Promise<Swap> {
    const swapMint = options.mint ?? mint;
    const initiator = await generateKeyPairSigner(); // holds no SOL: the sponsor pays everything
    const redeemer = options.redeemer ?? (await world.funded(1n));
    const sponsor = await world.funded();
    const initiatorTokens = await world.tokenAccount(initiator.address, swapMint, 10n * AMOUNT);
    const redeemerTokens = await world.tokenAccount(redeemer.address, swapMint);
    const secret = Uint8Array.from(randomBytes(32));
    const secretHash = Uint8Array.from(createHash('sha256').update(secret).digest());
    const [swapData] = await findProgramAddress(program, swapAccountSeeds('spl', initiator.address, secretHash));
    const [vault] = await findProgramAddress(program, tokenVaultSeeds(swapMint));
    const vaultExisted = world.exists(vault);
    const identityExisted = world.exists(identityPda);
    const vaultBefore = vaultExisted ? world.tokenBalance(vault) : 0n;
    const sponsorBefore = world.balance(sponsor.address);

    const instruction = await splInitiateInstruction({
      program,
      initiator: initiator.address,
      mint: swapMint,
      sponsor: sponsor.address,
      args: { amount: AMOUNT, expiresInSlots: EXPIRES_IN_SLOTS, redeemer: redeemer.address, secretHash },
    });
    const outcome = await world.succeed(options.label ?? 'spl initiate', [instruction], [initiator], sponsor);
    const expirySlot = world.slot() + EXPIRES_IN_SLOTS;

    const rentPaid = swapRent + (vaultExisted ? 0n : world.rent(TOKEN_ACCOUNT_BYTES)) + (identityExisted ? 0n : world.rent(0n));
    assert.equal(world.balance(sponsor.address), sponsorBefore - rentPaid - 2n * FEE_PER_SIGNATURE, 'the sponsor pays the rent and both signatures');
    assert.equal(world.tokenBalance(initiatorTokens), 9n * AMOUNT);
    assert.equal(world.tokenBalance(vault), vaultBefore + AMOUNT);
    const [event] = decodeSwapEvents('spl', program, outcome.logs);
    assert.deepEqual(event, {
      name: 'Initiated',
      amount: AMOUNT,
      expiresInSlots: EXPIRES_IN_SLOTS,
      initiator: initiator.address,
      mint: swapMint,
      redeemer: redeemer.address,
      secretHash,
      destinationData: null,
    });
    return { initiator, redeemer, sponsor, mint: swapMint, initiatorTokens, redeemerTokens, secret, secretHash, swapData, vault, expirySlot };
  }

  const ref = (swap: Swap) => ({ program, initiator: swap.initiator.address, secretHash: swap.secretHash, mint: swap.mint, sponsor: swap.sponsor.address });
  const replace = (instruction: Instruction, index: number, change: Partial<NonNullable<Instruction['accounts']>[number]>): Instruction => ({
    ...instruction,
    accounts: instruction.accounts!.map((a, i) => (i === index ? { ...a, ...change } : a)),
  });

  test('the first initiate creates the identity PDA and the vault, later ones reuse them; the swap data is the IDL layout plus the mint', async () => {
    const first = await initiate({ label: 'spl initiate (creates identity and vault)' });
    assert.equal(world.owner(identityPda), program);
    const second = await initiate();
    assert.equal(second.vault, first.vault);
    assert.equal(world.tokenBalance(first.vault), 2n * AMOUNT);
    const data = world.data(second.swapData);
    assert.equal(data.length, SPL_SWAP_ACCOUNT_WITH_MINT_BYTES);
    const [, identityBump] = await findProgramAddress(program, IDENTITY_PDA_SEEDS);
    assert.deepEqual(decodeSplSwapAccount(data), {
      expirySlot: second.expirySlot,
      initiator: second.initiator.address,
      redeemer: second.redeemer.address,
      secretHash: second.secretHash,
      swapAmount: AMOUNT,
      identityPdaBump: identityBump,
      sponsor: second.sponsor.address,
      mint,
    });
  });

  test('the non-gasless flow: the initiator is its own sponsor and fee payer (one account in two places)', async () => {
    const initiator = await world.funded();
    const redeemer = await generateKeyPairSigner();
    const initiatorTokens = await world.tokenAccount(initiator.address, mint, AMOUNT);
    const redeemerTokens = await world.tokenAccount(redeemer.address, mint);
    const secret = Uint8Array.from(randomBytes(32));
    const secretHash = Uint8Array.from(createHash('sha256').update(secret).digest());
    const before = world.balance(initiator.address);
    const args = { amount: AMOUNT, expiresInSlots: 9n, redeemer: redeemer.address, secretHash };
    await world.succeed('spl initiate (initiator sponsors)', [await splInitiateInstruction({ program, initiator: initiator.address, mint, sponsor: initiator.address, args })], [], initiator);
    assert.equal(world.balance(initiator.address), before - swapRent - FEE_PER_SIGNATURE);
    assert.equal(world.tokenBalance(initiatorTokens), 0n);
    await world.succeed('spl redeem (initiator sponsored)', [await splRedeemInstruction({ program, initiator: initiator.address, secretHash, mint, sponsor: initiator.address, redeemer: redeemer.address, secret })]);
    assert.equal(world.tokenBalance(redeemerTokens), AMOUNT);
    assert.equal(world.balance(initiator.address), before - FEE_PER_SIGNATURE, 'the rent came back to the initiator as sponsor');
  });

  test('initiate carries destination_data into the Initiated event as given', async () => {
    const initiator = await generateKeyPairSigner();
    const redeemer = await generateKeyPairSigner();
    const sponsor = await world.funded();
    await world.tokenAccount(initiator.address, mint, AMOUNT);
    const secretHash = Uint8Array.from(randomBytes(32));
    const instruction = await splInitiateInstruction({ program, initiator: initiator.address, mint, sponsor: sponsor.address, args: { amount: AMOUNT, expiresInSlots: 9n, redeemer: redeemer.address, secretHash } });
    const destination = new TextEncoder().encode('bitcoin:bc1qexampledestination');
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, destination.length, true);
    const data = Uint8Array.from([...instruction.data!.subarray(0, instruction.data!.length - 1), 1, ...len, ...destination]);
    const outcome = await world.succeed('spl initiate (destination data)', [{ ...instruction, data }], [initiator], sponsor);
    const [event] = decodeSwapEvents('spl', program, outcome.logs);
    assert.ok(event?.name === 'Initiated');
    assert.deepEqual(event.destinationData, destination);
    const other = await splInitiateInstruction({ program, initiator: initiator.address, mint, sponsor: sponsor.address, args: { amount: 1n, expiresInSlots: 9n, redeemer: redeemer.address, secretHash: Uint8Array.from(randomBytes(32)) } });
    const bad = Uint8Array.from([...other.data!.subarray(0, other.data!.length - 1), 1, ...len, ...destination.subarray(1)]);
    const refused = await world.send([{ ...other, data: bad }], [initiator], sponsor);
    assert.equal(refused.customError, ANCHOR_ERRORS.InstructionDidNotDeserialize, 'destination data shorter than its length');
  });

  test('initiate still works when someone sent lamports to the swap data address first', async () => {
    const initiator = await generateKeyPairSigner();
    const redeemer = await generateKeyPairSigner();
    const sponsor = await world.funded();
    const initiatorTokens = await world.tokenAccount(initiator.address, mint, AMOUNT);
    const secretHash = Uint8Array.from(randomBytes(32));
    const [swapData] = await findProgramAddress(program, swapAccountSeeds('spl', initiator.address, secretHash));
    const donated = world.rent(0n);
    world.svm.airdrop(swapData, lamports(donated));
    assert.equal(world.balance(swapData), donated);
    const before = world.balance(sponsor.address);
    const instruction = await splInitiateInstruction({ program, initiator: initiator.address, mint, sponsor: sponsor.address, args: { amount: AMOUNT, expiresInSlots: 9n, redeemer: redeemer.address, secretHash } });
    await world.succeed('spl initiate (pre-funded address)', [instruction], [initiator], sponsor);
    assert.equal(world.balance(sponsor.address), before - (swapRent - donated) - 2n * FEE_PER_SIGNATURE);
    assert.equal(world.owner(swapData), program);
    assert.equal(decodeSplSwapAccount(world.data(swapData)).swapAmount, AMOUNT);
    assert.equal(world.tokenBalance(initiatorTokens), 0n);
  });

  test('redeem pays the redeemer from the vault, returns the rent to the sponsor and logs the secret', async () => {
    const swap = await initiate();
    const vaultBefore = world.tokenBalance(swap.vault);
    const sponsorBefore = world.balance(swap.sponsor.address);
    const outcome = await world.succeed('spl redeem', [await splRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret })]);
    assert.equal(world.tokenBalance(swap.redeemerTokens), AMOUNT);
    assert.equal(world.tokenBalance(swap.vault), vaultBefore - AMOUNT);
    assert.equal(world.balance(swap.sponsor.address), sponsorBefore + swapRent);
    assert.equal(world.exists(swap.swapData), false);
    assert.deepEqual(decodeSwapEvents('spl', program, outcome.logs), [{ name: 'Redeemed', initiator: swap.initiator.address, secret: swap.secret }]);
  });

  test('redeem refuses a wrong secret and secrets of 31 or 33 bytes', async () => {
    const swap = await initiate();
    const redeem = await splRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    await world.refuse('wrong secret', [{ ...redeem, data: Uint8Array.from([...REDEEM_DISCRIMINATOR, ...randomBytes(32)]) }], SPL_SWAP_ERRORS.InvalidSecret);
    await world.refuse('31-byte secret', [{ ...redeem, data: Uint8Array.from([...REDEEM_DISCRIMINATOR, ...swap.secret.subarray(0, 31)]) }], ANCHOR_ERRORS.InstructionDidNotDeserialize);
    await world.refuse('33-byte secret', [{ ...redeem, data: Uint8Array.from([...REDEEM_DISCRIMINATOR, ...swap.secret, 7]) }], ANCHOR_ERRORS.InstructionDidNotDeserialize);
    assert.equal(world.tokenBalance(swap.redeemerTokens), 0n);
  });

  test('redeem refuses token accounts of others or of another mint, the vault itself, another sponsor and a forged identity', async () => {
    const swap = await initiate();
    const redeem = await splRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    const stranger = await generateKeyPairSigner();
    const strangerTokens = await world.tokenAccount(stranger.address, mint);
    const redeemerOtherMint = await world.tokenAccount(swap.redeemer.address, otherMint);
    await world.refuse("a stranger's token account", [replace(redeem, 3, { address: strangerTokens })], SPL_SWAP_ERRORS.InvalidRedeemer);
    await world.refuse("the initiator's token account", [replace(redeem, 3, { address: swap.initiatorTokens })], SPL_SWAP_ERRORS.InvalidRedeemer);
    await world.refuse("the redeemer's account of another mint", [replace(redeem, 3, { address: redeemerOtherMint })], ANCHOR_ERRORS.ConstraintTokenMint);
    await world.refuse('the vault as the redeemer account', [replace(redeem, 3, { address: swap.vault })], SPL_SWAP_ERRORS.InvalidRedeemer);
    await world.refuse('another sponsor', [replace(redeem, 4, { address: stranger.address })], SPL_SWAP_ERRORS.InvalidSponsor);
    await world.refuse('the redeemer as sponsor', [replace(redeem, 4, { address: swap.redeemer.address })], SPL_SWAP_ERRORS.InvalidSponsor);
    await world.refuse('a forged identity PDA', [replace(redeem, 0, { address: stranger.address })], ANCHOR_ERRORS.ConstraintSeeds);
    await world.refuse('the swap data as identity', [replace(redeem, 0, { address: swap.swapData })], ANCHOR_ERRORS.ConstraintSeeds);
    await world.refuse('another token program', [replace(redeem, 5, { address: '11111111111111111111111111111111' as Address })], ANCHOR_ERRORS.InvalidProgramId);
    assert.equal(world.tokenBalance(swap.redeemerTokens), 0n);
  });

  test("a swap of one mint cannot be paid out of another mint's vault", async () => {
    // A swap of a cheap mint, then a redeem naming the vault (and a redeemer account) of another mint.
    await initiate({ mint: otherMint, label: 'spl initiate (other mint)' });
    const cheap = await initiate({ mint });
    const [otherVault] = await findProgramAddress(program, tokenVaultSeeds(otherMint));
    const redeemerOther = await world.tokenAccount(cheap.redeemer.address, otherMint);
    const otherVaultBefore = world.tokenBalance(otherVault);
    const redeem = await splRedeemInstruction({ ...ref(cheap), redeemer: cheap.redeemer.address, secret: cheap.secret });
    await world.refuse('vault of another mint', [replace(replace(redeem, 2, { address: otherVault }), 3, { address: redeemerOther })], ANCHOR_ERRORS.ConstraintTokenMint);
    const refund = await splRefundInstruction(ref(cheap));
    const initiatorOther = await world.tokenAccount(cheap.initiator.address, otherMint);
    world.svm.warpToSlot(cheap.expirySlot + 1n);
    await world.refuse('refund from the vault of another mint', [replace(replace(refund, 2, { address: otherVault }), 3, { address: initiatorOther })], ANCHOR_ERRORS.ConstraintTokenMint);
    assert.equal(world.tokenBalance(otherVault), otherVaultBefore);
  });

  test('a token account owned by the identity PDA that is not the vault PDA is refused as the vault', async () => {
    const swap = await initiate();
    const fake = await world.tokenAccount(identityPda, mint);
    const redeem = await splRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    await world.refuse('a second token account of the identity PDA', [replace(redeem, 2, { address: fake })], ANCHOR_ERRORS.ConstraintSeeds);
  });

  test('refund is refused up to the expiry slot and pays the initiator just after it; it checks the initiator token account', async () => {
    const swap = await initiate();
    const refund = await splRefundInstruction(ref(swap));
    await world.refuse('refund before expiry', [refund], SPL_SWAP_ERRORS.RefundBeforeExpiry);
    world.svm.warpToSlot(swap.expirySlot);
    await world.refuse('refund at the expiry slot', [refund], SPL_SWAP_ERRORS.RefundBeforeExpiry);
    world.svm.warpToSlot(swap.expirySlot + 1n);
    await world.refuse("refund to the redeemer's token account", [replace(refund, 3, { address: swap.redeemerTokens })], ANCHOR_ERRORS.ConstraintTokenOwner);
    await world.refuse('refund with another sponsor', [replace(refund, 4, { address: swap.redeemer.address })], SPL_SWAP_ERRORS.InvalidSponsor);
    const sponsorBefore = world.balance(swap.sponsor.address);
    const outcome = await world.succeed('spl refund', [refund]);
    assert.equal(world.tokenBalance(swap.initiatorTokens), 10n * AMOUNT);
    assert.equal(world.balance(swap.sponsor.address), sponsorBefore + swapRent);
    assert.equal(world.exists(swap.swapData), false);
    assert.deepEqual(decodeSwapEvents('spl', program, outcome.logs), [{ name: 'Refunded', initiator: swap.initiator.address, secretHash: swap.secretHash }]);
    await world.refuse('a second refund', [refund], ANCHOR_ERRORS.AccountNotInitialized);
  });

  test('instant refund needs the redeemer signature and pays the initiator at once', async () => {
    const swap = await initiate();
    const instant = await splInstantRefundInstruction({ ...ref(swap), redeemer: swap.redeemer.address });
    await world.refuse('without the redeemer signature', [replace(instant, 4, { role: AccountRole.WRITABLE })], ANCHOR_ERRORS.AccountNotSigner);
    const stranger = await world.funded(1n);
    await world.refuse('signed by another', [replace(instant, 4, { address: stranger.address })], SPL_SWAP_ERRORS.InvalidRedeemer, [stranger]);
    const sponsorBefore = world.balance(swap.sponsor.address);
    const outcome = await world.succeed('spl instant_refund', [instant], [swap.redeemer]);
    assert.equal(world.tokenBalance(swap.initiatorTokens), 10n * AMOUNT);
    assert.equal(world.balance(swap.sponsor.address), sponsorBefore + swapRent);
    assert.equal(world.exists(swap.swapData), false);
    assert.deepEqual(decodeSwapEvents('spl', program, outcome.logs), [{ name: 'InstantRefunded', initiator: swap.initiator.address, secretHash: swap.secretHash }]);
  });

  test('a copy of a swap data account owned by another program is refused', async () => {
    const swap = await initiate();
    const original = world.svm.getAccount(swap.swapData);
    assert.ok(original.exists);
    const copy = (await generateKeyPairSigner()).address;
    world.svm.setAccount({ ...original, address: copy, programAddress: world.programs.native_swaps, lamports: lamports(swapRent) });
    const redeem = await splRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    await world.refuse('copy owned by the native program', [replace(redeem, 1, { address: copy })], ANCHOR_ERRORS.AccountOwnedByWrongProgram);
  });

  test('an SPL swap data account passed to the native program is refused (owner)', async () => {
    const swap = await initiate();
    const redeem = await splRedeemInstruction({ ...ref(swap), redeemer: swap.redeemer.address, secret: swap.secret });
    const outcome = await world.send([{ ...redeem, programAddress: world.programs.native_swaps, accounts: redeem.accounts!.slice(1, 4) }]);
    assert.equal(outcome.customError, ANCHOR_ERRORS.AccountOwnedByWrongProgram);
  });

  test('a second initiate of an open swap fails (account already in use); initiate checks its accounts', async () => {
    const swap = await initiate();
    const args = { amount: AMOUNT, expiresInSlots: 5n, redeemer: swap.redeemer.address, secretHash: swap.secretHash };
    const again = await splInitiateInstruction({ program, initiator: swap.initiator.address, mint, sponsor: swap.sponsor.address, args });
    const outcome = await world.send([again], [swap.initiator], swap.sponsor);
    assert.equal(outcome.ok, false);
    assert.equal(outcome.customError, 0, 'SystemError::AccountAlreadyInUse');
    assert.equal(world.tokenBalance(swap.initiatorTokens), 9n * AMOUNT);

    const fresh = { ...args, secretHash: Uint8Array.from(randomBytes(32)) };
    const good = await splInitiateInstruction({ program, initiator: swap.initiator.address, mint, sponsor: swap.sponsor.address, args: fresh });
    const send = (ix: Instruction, code: number) => world.send([ix], [swap.initiator], swap.sponsor).then((o) => assert.equal(o.customError, code, o.error));
    await send(replace(good, 3, { role: AccountRole.READONLY }), ANCHOR_ERRORS.AccountNotSigner);
    await send(replace(good, 4, { address: swap.redeemerTokens }), ANCHOR_ERRORS.ConstraintTokenOwner);
    await send(replace(good, 5, { address: otherMint }), ANCHOR_ERRORS.ConstraintTokenMint);
    const [otherVault] = await findProgramAddress(program, tokenVaultSeeds(otherMint));
    await send(replace(good, 2, { address: otherVault }), ANCHOR_ERRORS.ConstraintSeeds);
    await send(replace(good, 0, { address: swap.sponsor.address }), ANCHOR_ERRORS.ConstraintSeeds);
    await send(replace(good, 7, { address: '11111111111111111111111111111111' as Address }), ANCHOR_ERRORS.InvalidProgramId);
    assert.equal(world.tokenBalance(swap.initiatorTokens), 9n * AMOUNT);
  });
});
