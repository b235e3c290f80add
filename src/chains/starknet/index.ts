import type { FamilyHtlc, HtlcTerms, SigningOptions } from '../family.ts';
import { approveCall, initiateCall } from './calls.ts';
import { normalizeStarknetAddress } from './felt.ts';
import { starknetOrderId } from './order-id.ts';
import { initiateTypedData } from './typed-data.ts';

export { approveCall, initiateCall, SELECTORS, type StarknetCall } from './calls.ts';
export { normalizeStarknetAddress, secretHashWords, splitU256 } from './felt.ts';
export { starknetOrderId } from './order-id.ts';
export { initiateTypedData, type InitiateTypedData } from './typed-data.ts';

function htlcAddress(terms: HtlcTerms): string {
  const { htlc, id } = terms.asset;
  if (htlc.address === '') throw new Error(`${id}: the asset has no HTLC address`);
  return htlc.address;
}

/**
 * Starknet (Cairo HTLC, one contract per ERC-20). Addresses are felts, shown as 0x + 64 hex. The swap
 * id is the contract's order id (0x + 64 hex, see order-id.ts). The create-order response carries
 * `typed_data` (SNIP-12, for gasless `initiate_with_signature`; null when the app is not gasless),
 * `approval_transaction` and `initiate_transaction` (calls to execute together when self-funding).
 */
export const starknetHtlc: FamilyHtlc = {
  normalizeAddress(_chain, address) {
    return normalizeStarknetAddress(address);
  },

  swapId(terms) {
    return starknetOrderId({
      network: terms.asset.chain.network,
      secretHash: terms.secretHash,
      initiator: terms.initiator,
    });
  },

  async sourceSigningData(terms: HtlcTerms, options: SigningOptions) {
    const htlc = htlcAddress(terms);
    const { redeemer, timelock, amount, secretHash } = terms;
    return {
      typed_data: options.gasless
        ? initiateTypedData({ network: terms.asset.chain.network, redeemer, amount, timelock, secretHash })
        : null,
      approval_transaction: approveCall({ token: terms.asset.token.address, htlc, amount }),
      initiate_transaction: initiateCall({ htlc, redeemer, timelock, amount, secretHash }),
    };
  },
};
