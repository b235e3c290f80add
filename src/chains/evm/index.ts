import { getAddress, isAddress, type Address, type Hex } from 'viem';
import type { FamilyHtlc, HtlcTerms } from '../family.ts';
import type { Chain } from '../registry.ts';
import { approvalTransaction, initiateTransaction } from './htlc-calls.ts';
import { evmOrderId, type EvmOrderTerms } from './order-id.ts';
import { initiateTypedDataJson } from '../solidity-htlc/typed-data.ts';

/** `evm:31337` -> 31337n */
export const evmChainId = (chain: Chain): bigint => BigInt(chain.id.slice(chain.id.indexOf(':') + 1));

/**
 * An EVM address: 0x and 40 hex digits, all lower case (no checksum to check) or with a valid
 * EIP-55 checksum. Returned checksummed.
 */
export function normalizeEvmAddress(address: string): Address | undefined {
  return isAddress(address, { strict: true }) ? getAddress(address) : undefined;
}

const isNative = (terms: HtlcTerms): boolean => terms.asset.token.schema === 'evm:native';

function orderTerms(terms: HtlcTerms): EvmOrderTerms {
  const secretHash: Hex = `0x${terms.secretHash}`;
  return {
    chainId: evmChainId(terms.asset.chain),
    secretHash,
    initiator: terms.initiator as Address,
    redeemer: terms.redeemer as Address,
    timelock: terms.timelock,
    amount: terms.amount,
    htlc: terms.asset.htlc.address as Address,
  };
}

export const evmHtlc: FamilyHtlc = {
  normalizeAddress: (_chain, address) => normalizeEvmAddress(address),

  swapId: (terms) => evmOrderId(orderTerms(terms)).slice(2),

  sourceSigningData: async (terms, options) => {
    const t = orderTerms(terms);
    const native = isNative(terms);
    const chainId = Number(t.chainId);
    return {
      to: t.htlc,
      amount: terms.amount.toString(),
      // Gasless initiation pulls an ERC-20 with initiateWithSignature; ether has to come with a call.
      typed_data: options.gasless && !native ? initiateTypedDataJson(t) : null,
      approval_transaction: native
        ? null
        : approvalTransaction({ chainId, token: terms.asset.token.address as Address, htlc: t.htlc, amount: t.amount }),
      initiate_transaction: initiateTransaction({ ...t, chainId, native }),
    };
  },
};
