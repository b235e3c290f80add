import { initiateTypedDataJson } from '../solidity-htlc/typed-data.ts';
import { tronToEvmHex } from './address.ts';
import { secretHashHex } from './order-id.ts';

/**
 * EIP-712 typed data in the API's JSON shape: the EVM HTLC's, since Tron runs the same contract.
 * Addresses are in 20-byte EVM form, as TIP-712 hashes `address` as 20 bytes.
 */
export type TronInitiateTypedData = ReturnType<typeof initiateTypedDataJson>;

/**
 * The EIP-712 (TIP-712 on Tron) data the initiator signs for the relayer's `initiateWithSignature`:
 * domain HTLC / "3" / TVM chain id / the HTLC. The message holds only the signed fields, with the
 * redeemer in EVM form: base58 copies alongside would show a wallet values the signature does not
 * cover, and a client can convert with `evmHexToTron` (the transactions carry base58 already).
 */
export function initiateTypedData(input: {
  chainId: bigint;
  htlc: string;
  redeemer: string;
  timelock: bigint;
  amount: bigint;
  secretHash: string;
}): TronInitiateTypedData {
  return initiateTypedDataJson({
    chainId: input.chainId,
    htlc: tronToEvmHex(input.htlc, 'htlc'),
    redeemer: tronToEvmHex(input.redeemer, 'redeemer'),
    timelock: input.timelock,
    amount: input.amount,
    secretHash: secretHashHex(input.secretHash),
  });
}
