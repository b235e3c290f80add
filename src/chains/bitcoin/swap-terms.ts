import type { SwapRecord } from '../../store/orders.ts';
import type { HtlcScriptTerms } from './htlc.ts';

/**
 * The script terms of an order's Bitcoin-family HTLC as its swap row stores them. On such a side
 * the client's role shows its payout address and `delegate` holds the key its script names; the
 * solver's role holds the solver's x-only key.
 */
export function swapScriptTerms(swap: SwapRecord, side: 'source' | 'destination', secretHash: string): HtlcScriptTerms {
  return side === 'source'
    ? { initiator: swap.delegate, redeemer: swap.redeemer, secretHash, timelock: BigInt(swap.timelock) }
    : { initiator: swap.initiator, redeemer: swap.delegate, secretHash, timelock: BigInt(swap.timelock) };
}

/** The client's payout address on a Bitcoin-family side (its owner). */
export function clientAddress(swap: SwapRecord, side: 'source' | 'destination'): string {
  return side === 'source' ? swap.initiator : swap.redeemer;
}
