import { AccountRole, type Address, type Instruction } from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { findProgramAddress } from './pda.ts';
import {
  encodeNativeInitiate,
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
