import { numberToHex, type Address, type Hex } from 'viem';
import { tronToEvmHex } from './address.ts';
import { secretHashHex } from './order-id.ts';

export const INITIATE_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
  Initiate: [
    { name: 'redeemer', type: 'address' },
    { name: 'timelock', type: 'uint256' },
    { name: 'amount', type: 'uint256' },
    { name: 'secretHash', type: 'bytes32' },
  ],
} as const;

/**
 * EIP-712 typed data in the API's JSON shape: numbers as 0x hex strings (as Garden serves the EVM
 * `typed_data`), addresses in 20-byte EVM form, since TIP-712 hashes `address` as 20 bytes.
 */
export interface TronInitiateTypedData {
  domain: { name: 'HTLC'; version: '3'; chainId: Hex; verifyingContract: Address };
  primaryType: 'Initiate';
  types: typeof INITIATE_TYPES;
  message: { redeemer: Address; timelock: Hex; amount: Hex; secretHash: Hex };
}

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
  return {
    domain: { name: 'HTLC', version: '3', chainId: numberToHex(input.chainId), verifyingContract: tronToEvmHex(input.htlc, 'htlc') },
    primaryType: 'Initiate',
    types: INITIATE_TYPES,
    message: {
      redeemer: tronToEvmHex(input.redeemer, 'redeemer'),
      timelock: numberToHex(input.timelock),
      amount: numberToHex(input.amount),
      secretHash: secretHashHex(input.secretHash),
    },
  };
}
