import { numberToHex, type Address, type Hex, type TypedDataDefinition } from 'viem';

/** EIP-712 domain of the HTLC contracts (DESIGN.md section 3). */
export const HTLC_DOMAIN_NAME = 'HTLC';
export const HTLC_DOMAIN_VERSION = '3';

export const initiateTypes = {
  Initiate: [
    { name: 'redeemer', type: 'address' },
    { name: 'timelock', type: 'uint256' },
    { name: 'amount', type: 'uint256' },
    { name: 'secretHash', type: 'bytes32' },
  ],
} as const;

export interface InitiateMessage {
  chainId: bigint;
  htlc: Address;
  redeemer: Address;
  timelock: bigint;
  amount: bigint;
  secretHash: Hex;
}

/** The typed data as viem signs, hashes and recovers it. */
export function initiateTypedData(m: InitiateMessage): TypedDataDefinition<typeof initiateTypes, 'Initiate'> {
  return {
    domain: { name: HTLC_DOMAIN_NAME, version: HTLC_DOMAIN_VERSION, chainId: m.chainId, verifyingContract: m.htlc },
    types: initiateTypes,
    primaryType: 'Initiate',
    message: { redeemer: m.redeemer, timelock: m.timelock, amount: m.amount, secretHash: m.secretHash },
  };
}

/**
 * The typed data as the API sends it, ready for eth_signTypedData_v4: numbers as hex quantities and
 * the EIP712Domain type spelled out, as Garden's API shows it.
 */
export function initiateTypedDataJson(m: InitiateMessage) {
  return {
    domain: {
      name: HTLC_DOMAIN_NAME as typeof HTLC_DOMAIN_NAME,
      version: HTLC_DOMAIN_VERSION as typeof HTLC_DOMAIN_VERSION,
      chainId: numberToHex(m.chainId),
      verifyingContract: m.htlc,
    },
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ] as const,
      ...initiateTypes,
    },
    primaryType: 'Initiate' as const,
    message: {
      redeemer: m.redeemer,
      timelock: numberToHex(m.timelock),
      amount: numberToHex(m.amount),
      secretHash: m.secretHash,
    },
  };
}

export const refundTypes = { Refund: [{ name: 'orderId', type: 'bytes32' }] } as const;

/**
 * `Refund(bytes32 orderId)` in the HTLC domain. The redeemer's signature of it lets the contract
 * refund at once (instantRefund); the initiator's is the proof the API asks of a client that wants
 * its EVM source refunded at once (docs/api.md).
 */
export function refundTypedData(m: { chainId: bigint; htlc: Address; orderId: Hex }): TypedDataDefinition<typeof refundTypes, 'Refund'> {
  return {
    domain: { name: HTLC_DOMAIN_NAME, version: HTLC_DOMAIN_VERSION, chainId: m.chainId, verifyingContract: m.htlc },
    types: refundTypes,
    primaryType: 'Refund',
    message: { orderId: m.orderId },
  };
}
