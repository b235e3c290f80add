import { isAddress } from '@solana/kit';
import type { HtlcProgramKind } from './program.ts';

/**
 * What a Solana job does, fixed when it is enqueued; the sender builds, signs and sends it with its
 * own account as the fee payer. Amounts and slots are decimal strings, keys base58, hashes and secrets
 * 64 hex characters, so the payload survives its JSON column unchanged.
 */
export type SolanaJobPayload =
  /** A transaction the client signed (the gasless initiate): the sender adds the fee payer's signature. */
  | { kind: 'client-signed'; tx: string; lastValidBlockHeight: string }
  /** The sender's account initiates an HTLC (the solver funding a destination; it is initiator and, for SPL, sponsor). */
  | (JobSwap & { kind: 'initiate'; redeemer: string; amount: string; expiresInSlots: string })
  | (JobSwap & { kind: 'redeem'; redeemer: string; secret: string })
  | (JobSwap & { kind: 'refund' })
  /** The sender's account signs as the swap's redeemer. */
  | (JobSwap & { kind: 'instant-refund'; redeemer: string });

/** One swap of one HTLC program: the swap account is the program's PDA of the initiator and secret hash. */
export interface JobSwap {
  program: string;
  programKind: HtlcProgramKind;
  initiator: string;
  secretHash: string;
  /** SPL: the token and the account that paid the swap account's rent (it gets the rent back). */
  mint?: string;
  sponsor?: string;
}

const HEX32 = /^[0-9a-f]{64}$/;
const DECIMAL = /^[0-9]{1,20}$/;

/** Checks a payload read back from the queue; a row written by something else fails loudly, not on chain. */
export function parseSolanaPayload(value: unknown): SolanaJobPayload {
  const p = value as Record<string, unknown> | null;
  const bad = (field: string): never => {
    throw new Error(`solana job ${String(p?.kind)}: ${field} is malformed`);
  };
  const key = (field: string, optional = false) => {
    if (optional && p![field] === undefined) return;
    if (typeof p![field] !== 'string' || !isAddress(p![field])) bad(field);
  };
  switch (p?.kind) {
    case 'client-signed':
      if (typeof p.tx !== 'string' || p.tx === '') bad('tx');
      if (typeof p.lastValidBlockHeight !== 'string' || !DECIMAL.test(p.lastValidBlockHeight)) bad('lastValidBlockHeight');
      return p as unknown as SolanaJobPayload;
    case 'initiate':
    case 'redeem':
    case 'refund':
    case 'instant-refund':
      break;
    default:
      throw new Error(`unknown solana job kind ${String(p?.kind)}`);
  }
  key('program');
  key('initiator');
  if (p.programKind !== 'native' && p.programKind !== 'spl') bad('programKind');
  if (typeof p.secretHash !== 'string' || !HEX32.test(p.secretHash)) bad('secretHash');
  key('mint', p.programKind === 'native');
  key('sponsor', p.programKind === 'native' || p.kind === 'initiate');
  if (p.kind !== 'refund') key('redeemer');
  if (p.kind === 'initiate') for (const f of ['amount', 'expiresInSlots']) if (typeof p[f] !== 'string' || !DECIMAL.test(p[f])) bad(f);
  // Safety rule 3: a secret is exactly 32 bytes here too, whoever wrote the job.
  if (p.kind === 'redeem' && (typeof p.secret !== 'string' || !HEX32.test(p.secret))) bad('secret');
  return p as unknown as SolanaJobPayload;
}
