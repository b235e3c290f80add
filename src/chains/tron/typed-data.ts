import { initiateTypedDataJson } from '../solidity-htlc/typed-data.ts';
import { tronToEvmHex } from './address.ts';
import { secretHashHex } from './order-id.ts';

/**
 * EIP-712 typed data in the API's JSON shape: the EVM HTLC's, since Tron runs the same contract.
 * Addresses are in 20-byte EVM form, as TIP-712 hashes `address` as 20 bytes. The message carries
 * `destinationData` ('0x') besides the signed fields: Garden's TronRelay passes it to the HTLC's
 * five-argument initiate; it is not in the `Initiate` type, so it is not signed (wallets hash the
 * type's fields only).
 */
export type TronInitiateTypedData = ReturnType<typeof initiateTypedDataJson> & {
  message: ReturnType<typeof initiateTypedDataJson>['message'] & { destinationData: '0x' };
};

/**
 * The EIP-712 (TIP-712 on Tron) data the initiator signs for the relayer's `initiateWithSignature`:
 * domain HTLC / "3" / Tron's 32-bit chain id / the HTLC, the redeemer in EVM form (base58 copies
 * alongside would show a wallet values the signature does not cover; `evmHexToTron` converts).
 */
export function initiateTypedData(input: {
  chainId: bigint;
  htlc: string;
  redeemer: string;
  timelock: bigint;
  amount: bigint;
  secretHash: string;
}): TronInitiateTypedData {
  const typed = initiateTypedDataJson({
    chainId: input.chainId,
    htlc: tronToEvmHex(input.htlc, 'htlc'),
    redeemer: tronToEvmHex(input.redeemer, 'redeemer'),
    timelock: input.timelock,
    amount: input.amount,
    secretHash: secretHashHex(input.secretHash),
  });
  return { ...typed, message: { ...typed.message, destinationData: '0x' } };
}
