import { sha256 } from '@noble/hashes/sha2.js';
import { getAddressEncoder, type Address } from '@solana/kit';
import type { SwapEvent } from '../../store/swap-events.ts';
import type { Chain } from '../registry.ts';
import { solanaAddress } from './address.ts';
import { decodeSwapEvents, type SwapEvent as ProgramEvent } from './events.ts';
import { findProgramAddressSync } from './pda.ts';
import { programKind, swapAccountSeeds, type HtlcProgramKind } from './program.ts';
import { decodeNativeSwapAccount, decodeSplSwapAccount } from './swap-account.ts';

/** One HTLC program of a chain, as the registry's assets name it. */
export interface HtlcProgram {
  address: Address;
  kind: HtlcProgramKind;
}

/** The distinct HTLC programs of the chain's assets. */
export function htlcPrograms(chain: Chain): HtlcProgram[] {
  const programs = new Map<string, HtlcProgram>();
  for (const asset of chain.assets) {
    if (asset.htlc.address === '') continue;
    programs.set(asset.htlc.address, { address: solanaAddress(asset.htlc.address, 'asset.htlc.address'), kind: programKind(asset.htlc.schema) });
  }
  return [...programs.values()];
}

/** A program's event with the swap it settles: the swap account (the PDA of its initiator and secret hash) in hex. */
export interface HtlcEvent {
  program: Address;
  swapId: string;
  event: ProgramEvent;
}

/** The HTLC events the chain's programs logged in one transaction, each with its swap id. */
export function htlcEventsOfLogs(programs: readonly HtlcProgram[], logs: readonly string[]): HtlcEvent[] {
  return programs.flatMap((program) =>
    decodeSwapEvents(program.kind, program.address, logs).map((event) => {
      // A redeem names the secret; the swap account's seed is its hash.
      const secretHash = event.name === 'Redeemed' ? sha256(event.secret) : event.secretHash;
      const [account] = findProgramAddressSync(program.address, swapAccountSeeds(program.kind, event.initiator, secretHash));
      return { program: program.address, swapId: Buffer.from(getAddressEncoder().encode(account)).toString('hex'), event };
    }),
  );
}

/** The swap rows' events of one successful transaction: initiated (its amount), redeemed (its secret), refunded (either refund). */
export function swapEventsOfTransaction(
  programs: readonly HtlcProgram[],
  logs: readonly string[],
  tx: { txHash: string; blockNumber: bigint; timestamp: Date | null },
): SwapEvent[] {
  return htlcEventsOfLogs(programs, logs).map(({ swapId, event }): SwapEvent => {
    const base = { swapId, ...tx };
    switch (event.name) {
      case 'Initiated':
        return { ...base, kind: 'initiated', amount: event.amount };
      case 'Redeemed':
        return { ...base, kind: 'redeemed', secret: Buffer.from(event.secret).toString('hex') };
      case 'Refunded':
      case 'InstantRefunded':
        return { ...base, kind: 'refunded' };
    }
  });
}

/** A swap account of either program, in one shape. */
export interface OnChainSwap {
  amount: bigint;
  expirySlot: bigint;
  initiator: Address;
  redeemer: Address;
  secretHash: string;
  /** SPL: who paid the rent, and gets it back. */
  sponsor?: Address;
  /** SPL: the token, where the program records it (Hashlock's does, Garden's does not). */
  mint?: Address;
}

export function decodeSwapAccount(kind: HtlcProgramKind, data: Uint8Array): OnChainSwap {
  if (kind === 'native') {
    const a = decodeNativeSwapAccount(data);
    return { amount: a.amountLamports, expirySlot: a.expirySlot, initiator: a.initiator, redeemer: a.redeemer, secretHash: Buffer.from(a.secretHash).toString('hex') };
  }
  const a = decodeSplSwapAccount(data);
  return {
    amount: a.swapAmount,
    expirySlot: a.expirySlot,
    initiator: a.initiator,
    redeemer: a.redeemer,
    secretHash: Buffer.from(a.secretHash).toString('hex'),
    sponsor: a.sponsor,
    ...(a.mint ? { mint: a.mint } : {}),
  };
}
