import { AccountRole, type Address, type Instruction } from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { findProgramAddress } from './pda.ts';
import {
  encodeInstantRefund,
  encodeNativeInitiate,
  encodeRedeem,
  encodeRefund,
  encodeSplInitiate,
  IDENTITY_PDA_SEEDS,
  swapAccountSeeds,
  tokenVaultSeeds,
  type InitiateArgs,
} from './program.ts';

/** The native program's `initiate`; account order is the program's `Initiate` accounts struct. */
export async function nativeInitiateInstruction(input: {
  program: Address;
  initiator: Address;
  args: InitiateArgs;
}): Promise<Instruction> {
  const [swapAccount] = await findProgramAddress(
    input.program,
    swapAccountSeeds('native', input.initiator, input.args.secretHash),
  );
  return {
    programAddress: input.program,
    accounts: [
      { address: swapAccount, role: AccountRole.WRITABLE },
      { address: input.initiator, role: AccountRole.WRITABLE_SIGNER },
      { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: encodeNativeInitiate(input.args),
  };
}

/**
 * The SPL program's `initiate`, accounts in the order of its IDL (v0.4): identity_pda, swap_data,
 * token_vault, initiator, initiator_token_account, mint, sponsor, token program, system program.
 * The initiator's tokens come from its associated token account for `mint` under the classic
 * Token program, the only token program the program accepts (`tokenProgram` is fixed in its IDL).
 */
export async function splInitiateInstruction(input: {
  program: Address;
  initiator: Address;
  mint: Address;
  sponsor: Address;
  args: InitiateArgs;
}): Promise<Instruction> {
  const { program, initiator, mint } = input;
  const [[identityPda], [swapData], [tokenVault], [initiatorTokenAccount]] = await Promise.all([
    findProgramAddress(program, IDENTITY_PDA_SEEDS),
    findProgramAddress(program, swapAccountSeeds('spl', initiator, input.args.secretHash)),
    findProgramAddress(program, tokenVaultSeeds(mint)),
    findAssociatedTokenPda({ owner: initiator, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }),
  ]);
  return {
    programAddress: program,
    accounts: [
      { address: identityPda, role: AccountRole.WRITABLE },
      { address: swapData, role: AccountRole.WRITABLE },
      { address: tokenVault, role: AccountRole.WRITABLE },
      { address: initiator, role: AccountRole.READONLY_SIGNER },
      { address: initiatorTokenAccount, role: AccountRole.WRITABLE },
      { address: mint, role: AccountRole.READONLY },
      { address: input.sponsor, role: AccountRole.WRITABLE_SIGNER },
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
      { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: encodeSplInitiate(input.args),
  };
}

/** Which swap a closing instruction settles: its program, initiator and secret hash (the swap PDA's seeds). */
export interface SwapRef {
  program: Address;
  initiator: Address;
  secretHash: Uint8Array;
}

async function swapAccountAddress(kind: 'native' | 'spl', swap: SwapRef): Promise<Address> {
  const [pda] = await findProgramAddress(swap.program, swapAccountSeeds(kind, swap.initiator, swap.secretHash));
  return pda;
}

/** Native `redeem(secret)`: swap_account, initiator (gets the rent back), redeemer (gets the lamports). No signer. */
export async function nativeRedeemInstruction(input: SwapRef & { redeemer: Address; secret: Uint8Array }): Promise<Instruction> {
  return {
    programAddress: input.program,
    accounts: [
      { address: await swapAccountAddress('native', input), role: AccountRole.WRITABLE },
      { address: input.initiator, role: AccountRole.WRITABLE },
      { address: input.redeemer, role: AccountRole.WRITABLE },
    ],
    data: encodeRedeem(input.secret),
  };
}

/** Native `refund()` after the expiry slot: swap_account, initiator. No signer. */
export async function nativeRefundInstruction(input: SwapRef): Promise<Instruction> {
  return {
    programAddress: input.program,
    accounts: [
      { address: await swapAccountAddress('native', input), role: AccountRole.WRITABLE },
      { address: input.initiator, role: AccountRole.WRITABLE },
    ],
    data: encodeRefund(),
  };
}

/** Native `instant_refund()`: swap_account, initiator, redeemer (signs). */
export async function nativeInstantRefundInstruction(input: SwapRef & { redeemer: Address }): Promise<Instruction> {
  return {
    programAddress: input.program,
    accounts: [
      { address: await swapAccountAddress('native', input), role: AccountRole.WRITABLE },
      { address: input.initiator, role: AccountRole.WRITABLE },
      { address: input.redeemer, role: AccountRole.READONLY_SIGNER },
    ],
    data: encodeInstantRefund(),
  };
}

/** The SPL program's identity PDA, the swap_data PDA and the mint's vault. */
async function splSwapAccounts(swap: SwapRef, mint: Address): Promise<{ identityPda: Address; swapData: Address; tokenVault: Address }> {
  const [[identityPda], swapData, [tokenVault]] = await Promise.all([
    findProgramAddress(swap.program, IDENTITY_PDA_SEEDS),
    swapAccountAddress('spl', swap),
    findProgramAddress(swap.program, tokenVaultSeeds(mint)),
  ]);
  return { identityPda, swapData, tokenVault };
}

async function associatedTokenAccount(owner: Address, mint: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return ata;
}

/**
 * SPL `redeem(secret)`: identity_pda, swap_data, token_vault, redeemer_token_account, sponsor (gets the
 * rent back), token program. No signer. The tokens go to the redeemer's associated token account
 * unless `redeemerTokenAccount` names another account the redeemer owns.
 */
export async function splRedeemInstruction(
  input: SwapRef & { mint: Address; sponsor: Address; redeemer: Address; secret: Uint8Array; redeemerTokenAccount?: Address },
): Promise<Instruction> {
  const { identityPda, swapData, tokenVault } = await splSwapAccounts(input, input.mint);
  return {
    programAddress: input.program,
    accounts: [
      { address: identityPda, role: AccountRole.READONLY },
      { address: swapData, role: AccountRole.WRITABLE },
      { address: tokenVault, role: AccountRole.WRITABLE },
      { address: input.redeemerTokenAccount ?? (await associatedTokenAccount(input.redeemer, input.mint)), role: AccountRole.WRITABLE },
      { address: input.sponsor, role: AccountRole.WRITABLE },
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: encodeRedeem(input.secret),
  };
}

/** SPL `refund()` after the expiry slot: identity_pda, swap_data, token_vault, initiator_token_account, sponsor, token program. */
export async function splRefundInstruction(
  input: SwapRef & { mint: Address; sponsor: Address; initiatorTokenAccount?: Address },
): Promise<Instruction> {
  const { identityPda, swapData, tokenVault } = await splSwapAccounts(input, input.mint);
  return {
    programAddress: input.program,
    accounts: [
      { address: identityPda, role: AccountRole.READONLY },
      { address: swapData, role: AccountRole.WRITABLE },
      { address: tokenVault, role: AccountRole.WRITABLE },
      { address: input.initiatorTokenAccount ?? (await associatedTokenAccount(input.initiator, input.mint)), role: AccountRole.WRITABLE },
      { address: input.sponsor, role: AccountRole.WRITABLE },
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: encodeRefund(),
  };
}

/**
 * SPL `instant_refund()`: identity_pda, swap_data, token_vault, initiator_token_account, redeemer
 * (signs), sponsor, token program.
 */
export async function splInstantRefundInstruction(
  input: SwapRef & { mint: Address; sponsor: Address; redeemer: Address; initiatorTokenAccount?: Address },
): Promise<Instruction> {
  const { identityPda, swapData, tokenVault } = await splSwapAccounts(input, input.mint);
  return {
    programAddress: input.program,
    accounts: [
      { address: identityPda, role: AccountRole.READONLY },
      { address: swapData, role: AccountRole.WRITABLE },
      { address: tokenVault, role: AccountRole.WRITABLE },
      { address: input.initiatorTokenAccount ?? (await associatedTokenAccount(input.initiator, input.mint)), role: AccountRole.WRITABLE },
      { address: input.redeemer, role: AccountRole.WRITABLE_SIGNER },
      { address: input.sponsor, role: AccountRole.WRITABLE },
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: encodeInstantRefund(),
  };
}
