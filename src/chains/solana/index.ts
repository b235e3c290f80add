/**
 * Solana HTLCs for orders whose source is on Solana (Garden-compatible programs, see program.ts).
 *
 * swap id: the address of the program account that holds the swap's state, shown as 32-byte
 * lowercase hex (the API shows Solana swap ids as 32-byte hex). That account is a PDA of the
 * asset's program: native `swap_account` = ["swap_account", initiator, secret_hash], SPL
 * `swap_data` = [initiator, secret_hash]. It is what a watcher reads to see the swap, and the
 * program refuses a second open swap with the same id.
 *
 * Signing data, both unsigned v0 transactions in base64:
 * - `versioned_tx`: the user pays the fees (and, for SPL, sponsors the rent) and signs alone.
 * - `versioned_tx_gasless` (SPL only): the relayer is fee payer and sponsor (signature 0), the user
 *   signs as initiator (signature 1). Null for native SOL, when the app is not gasless, or when no
 *   relayer is configured.
 */
import { getAddressEncoder, type Address } from '@solana/kit';
import type { Chain } from '../registry.ts';
import type { FamilyHtlc, HtlcTerms, SigningOptions } from '../family.ts';
import { normalizeSolanaAddress, secretHashBytes, solanaAddress } from './address.ts';
import { nativeInitiateInstruction, splInitiateInstruction } from './instructions.ts';
import { findProgramAddressSync } from './pda.ts';
import { programKind, swapAccountSeeds, type InitiateArgs } from './program.ts';
import { requireBlockhash, unsignedV0Transaction } from './transactions.ts';

/** The create-order response fields of an order with a Solana source. */
export type SolanaSigningData = {
  versioned_tx: string;
  versioned_tx_gasless: string | null;
};

const U64_MAX = (1n << 64n) - 1n;

export const solanaHtlc: FamilyHtlc = {
  normalizeAddress(chain: Chain, address: string): string | undefined {
    return chain.family === 'solana' ? normalizeSolanaAddress(address) : undefined;
  },

  swapId(terms: HtlcTerms): string {
    const kind = programKind(terms.asset.htlc.schema);
    const program = solanaAddress(terms.asset.htlc.address, 'asset.htlc.address');
    const initiator = solanaAddress(terms.initiator, 'initiator');
    const [pda] = findProgramAddressSync(program, swapAccountSeeds(kind, initiator, secretHashBytes(terms.secretHash)));
    return Buffer.from(getAddressEncoder().encode(pda)).toString('hex');
  },

  sourceSigningData: solanaSigningData,
};

export async function solanaSigningData(terms: HtlcTerms, options: SigningOptions): Promise<SolanaSigningData> {
  const kind = programKind(terms.asset.htlc.schema);
  const program = solanaAddress(terms.asset.htlc.address, 'asset.htlc.address');
  const initiator = solanaAddress(terms.initiator, 'initiator');
  const args: InitiateArgs = {
    amount: positiveU64(terms.amount, 'amount'),
    expiresInSlots: positiveU64(terms.timelock, 'timelock'),
    redeemer: solanaAddress(terms.redeemer, 'redeemer'),
    secretHash: secretHashBytes(terms.secretHash),
  };
  const blockhash = requireBlockhash(options.recentBlockhash);

  if (kind === 'native') {
    const instruction = await nativeInitiateInstruction({ program, initiator, args });
    return {
      versioned_tx: unsignedV0Transaction({ feePayer: initiator, blockhash, instructions: [instruction] }),
      versioned_tx_gasless: null,
    };
  }

  const mint = solanaAddress(terms.asset.token.address, 'asset.token.address');
  const splTransaction = async (payer: Address): Promise<string> => {
    const instruction = await splInitiateInstruction({ program, initiator, mint, sponsor: payer, args });
    return unsignedV0Transaction({ feePayer: payer, blockhash, instructions: [instruction] });
  };
  const relayer =
    options.gasless && options.relayer !== undefined && options.relayer !== ''
      ? solanaAddress(options.relayer, 'relayer')
      : undefined;
  return {
    versioned_tx: await splTransaction(initiator),
    versioned_tx_gasless: relayer === undefined ? null : await splTransaction(relayer),
  };
}

function positiveU64(value: bigint, field: string): bigint {
  if (value <= 0n || value > U64_MAX) throw new Error(`${field}: ${value} is outside 1..2^64-1`);
  return value;
}
