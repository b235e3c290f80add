import { LAMPORTS_PER_SIGNATURE } from '../../../chains/solana/transactions.ts';
import type { ParsedMessage } from './wire-transaction.ts';

// LiteSVM charges the cluster's base fee per signature (LAMPORTS_PER_SIGNATURE) too.

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const ED25519_PROGRAM = 'Ed25519SigVerify111111111111111111111111111';
const SECP256K1_PROGRAM = 'KeccakSecp256k11111111111111111111111111111';
const SECP256R1_PROGRAM = 'Secp256r1SigVerify1111111111111111111111111';
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

function u32(data: Uint8Array, offset: number): bigint {
  return BigInt(new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(offset, true));
}

function u64(data: Uint8Array, offset: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
}

/**
 * The fee a message pays (getFeeForMessage): 5,000 lamports per signature, precompile signatures
 * included, plus the priority fee, ceil(compute unit price x compute unit limit / 10^6). Without a
 * SetComputeUnitLimit the limit is 200,000 units per instruction, which over-counts builtin-only
 * transactions the runtime gives 3,000; it matters only when a price is set without a limit.
 */
export function messageFee(message: ParsedMessage): bigint {
  let signatures = BigInt(message.header.numRequiredSignatures);
  let unitLimit: bigint | undefined;
  let unitPrice = 0n;
  let otherInstructions = 0n;
  for (const ix of message.instructions) {
    const program = message.staticAccountKeys[ix.programIdIndex];
    const data = ix.data;
    if (program === ED25519_PROGRAM || program === SECP256K1_PROGRAM || program === SECP256R1_PROGRAM) signatures += BigInt(data[0] ?? 0);
    if (program === COMPUTE_BUDGET_PROGRAM) {
      if (data[0] === 2 && data.length >= 5) unitLimit = u32(data, 1);
      if (data[0] === 3 && data.length >= 9) unitPrice = u64(data, 1);
    } else {
      otherInstructions++;
    }
  }
  const limit = unitLimit ?? otherInstructions * DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
  const cappedLimit = limit < MAX_COMPUTE_UNIT_LIMIT ? limit : MAX_COMPUTE_UNIT_LIMIT;
  const priorityFee = (unitPrice * cappedLimit + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return signatures * LAMPORTS_PER_SIGNATURE + priorityFee;
}
