import { address, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import { getCreateAssociatedTokenIdempotentInstructionAsync, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { secretHashBytes } from './address.ts';
import {
  nativeInitiateInstruction,
  nativeInstantRefundInstruction,
  nativeRedeemInstruction,
  nativeRefundInstruction,
  splInitiateInstruction,
  splInstantRefundInstruction,
  splRedeemInstruction,
  splRefundInstruction,
} from './instructions.ts';
import type { SolanaJobPayload } from './jobs.ts';

/**
 * The instructions of a job the sender signs, with `payer` as fee payer (and, where the job says so,
 * initiator, sponsor or signing redeemer). A token payout goes to the payee's associated token
 * account, created first when it does not exist yet (idempotently, paid by the payer).
 */
export async function solanaJobInstructions(payload: Exclude<SolanaJobPayload, { kind: 'client-signed' }>, payer: KeyPairSigner): Promise<Instruction[]> {
  const swap = { program: address(payload.program), initiator: address(payload.initiator), secretHash: secretHashBytes(payload.secretHash) };
  const spl = payload.programKind === 'spl' ? { mint: address(payload.mint!), sponsor: address(payload.sponsor ?? payer.address) } : undefined;
  const tokenAccountOf = (owner: Address) =>
    getCreateAssociatedTokenIdempotentInstructionAsync({ payer, owner, mint: spl!.mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  switch (payload.kind) {
    case 'initiate': {
      const args = { amount: BigInt(payload.amount), expiresInSlots: BigInt(payload.expiresInSlots), redeemer: address(payload.redeemer), secretHash: swap.secretHash };
      if (!spl) return [await nativeInitiateInstruction({ program: swap.program, initiator: payer.address, args })];
      return [await splInitiateInstruction({ program: swap.program, initiator: payer.address, mint: spl.mint, sponsor: payer.address, args })];
    }
    case 'redeem': {
      const secret = Uint8Array.from(Buffer.from(payload.secret, 'hex'));
      const redeemer = address(payload.redeemer);
      if (!spl) return [await nativeRedeemInstruction({ ...swap, redeemer, secret })];
      return [await tokenAccountOf(redeemer), await splRedeemInstruction({ ...swap, ...spl, redeemer, secret })];
    }
    case 'refund':
      if (!spl) return [await nativeRefundInstruction(swap)];
      return [await tokenAccountOf(swap.initiator), await splRefundInstruction({ ...swap, ...spl })];
    case 'instant-refund': {
      const redeemer = address(payload.redeemer);
      if (!spl) return [await nativeInstantRefundInstruction({ ...swap, redeemer })];
      return [await tokenAccountOf(swap.initiator), await splInstantRefundInstruction({ ...swap, ...spl, redeemer })];
    }
  }
}
