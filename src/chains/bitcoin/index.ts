import type { FamilyHtlc, HtlcTerms } from '../family.ts';
import { normalizeBitcoinAddress } from './address.ts';
import { htlcAddress } from './htlc.ts';

/** Bitcoin-family HTLCs: the taproot HTLC address is both the swap id and where the initiator pays. */
export const bitcoinHtlc: FamilyHtlc = {
  normalizeAddress(chain, address) {
    return normalizeBitcoinAddress(chain.network, address);
  },

  swapId(terms) {
    return addressOf(terms);
  },

  async sourceSigningData(terms) {
    return { to: addressOf(terms), amount: terms.amount.toString() };
  },
};

function addressOf(terms: HtlcTerms): string {
  return htlcAddress(terms, terms.asset.chain.network);
}
