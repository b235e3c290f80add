import type { FamilyHtlc, HtlcTerms, SigningOptions } from '../family.ts';
import { normalizeTronAddress } from './address.ts';
import { approveCall, initiateCall } from './calls.ts';
import { tronChainId, tronOrderId } from './order-id.ts';
import { initiateTypedData } from './typed-data.ts';

export { evmHexToTron, normalizeTronAddress, tronToEvmHex } from './address.ts';
export { APPROVE_FEE_LIMIT, approveCall, INITIATE_FEE_LIMIT, initiateCall, type TronTxRequest } from './calls.ts';
export { tronChainId, tronOrderId } from './order-id.ts';
export { initiateTypedData, type TronInitiateTypedData } from './typed-data.ts';

function htlcAddress(terms: HtlcTerms): string {
  const { htlc, id } = terms.asset;
  if (htlc.address === '') throw new Error(`${id}: the asset has no HTLC address`);
  return htlc.address;
}

/**
 * Tron: the EVM HTLC (v3) on the TVM. Addresses are base58 at the API and 20-byte EVM hex inside
 * ABI data, typed data and order ids. The swap id is the contract's order id (hex, no 0x). The
 * create-order response carries `typed_data` (EIP-712/TIP-712 for gasless `initiateWithSignature`,
 * whose message Garden's TronRelay also reads as the arguments of a client's own initiate, so it is
 * served to every app), `approval_transaction` and `initiate_transaction` (TxRequests).
 */
export const tronHtlc: FamilyHtlc = {
  normalizeAddress(_chain, address) {
    return normalizeTronAddress(address);
  },

  swapId(terms) {
    return tronOrderId({ ...terms, chainId: terms.asset.chain.id, htlc: htlcAddress(terms) });
  },

  async sourceSigningData(terms: HtlcTerms, _options: SigningOptions) {
    const htlc = htlcAddress(terms);
    const { redeemer, timelock, amount, secretHash } = terms;
    const chainId = tronChainId(terms.asset.chain.id);
    return {
      typed_data: initiateTypedData({ chainId, htlc, redeemer, timelock, amount, secretHash }),
      approval_transaction: approveCall({ chainId: Number(chainId), token: terms.asset.token.address, htlc, amount }),
      initiate_transaction: initiateCall({ chainId: Number(chainId), htlc, redeemer, timelock, amount, secretHash }),
    };
  },
};
