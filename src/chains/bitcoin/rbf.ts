import type { SignedTx } from './wallet-tx.ts';

/** nSequence signalling BIP125 replaceability, with no relative timelock (BIP68 disabled above 2^31). */
export const RBF_SEQUENCE = 0xfffffffd;

/** A version of a job's transaction: same inputs, the fee at `feeRate`. */
export interface TxVersion {
  txid: string;
  hex: string;
  /** sat/vB, decimal. */
  feeRate: string;
}

/**
 * Whether the network's node software relays BIP125 replacements by default: Bitcoin Core does;
 * Litecoin Core ships with `-mempoolreplacement=0`, so a replacement reaches no miner there.
 */
export function relaysReplacements(network: string): boolean {
  return network.startsWith('bitcoin');
}

/**
 * A transaction signed at `feeRate` and up to `rounds` replacements of it at rising rates (each
 * half again, at least 1 sat/vB, above the one before, at most `maxFeeRate`): signed up front, so
 * the job is complete when written and a bump needs no key or secret. A rate `build` cannot pay
 * (the output would be dust) ends the list.
 */
export function feeLadder(build: (feeRate: bigint) => SignedTx, feeRate: bigint, rounds = 3, maxFeeRate = 200n): [SignedTx, ...TxVersion[]] {
  const first = build(feeRate);
  const versions: TxVersion[] = [];
  let rate = feeRate;
  for (let i = 0; i < rounds; i++) {
    const next = rate + (rate / 2n > 1n ? rate / 2n : 1n);
    if (next > maxFeeRate || rate >= maxFeeRate) break;
    rate = next;
    let tx: SignedTx;
    try {
      tx = build(rate);
    } catch {
      break;
    }
    versions.push({ txid: tx.txid, hex: tx.hex, feeRate: rate.toString() });
  }
  return [first, ...versions];
}
