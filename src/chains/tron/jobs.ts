import { encodeFunctionData, erc20Abi, isHex, maxUint256, size, type Hex } from 'viem';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';
import { normalizeTronAddress, tronToEvmHex } from './address.ts';

/**
 * What a Tron job does, fixed when it is enqueued: the driver only encodes, signs and sends it.
 * Contracts and parties are base58 Tron addresses (what people and explorers read); numbers, hashes
 * and signatures hex strings, so the payload survives its JSON column unchanged.
 */
export type TronJobPayload =
  /** The relayer's gasless initiate: initiateWithSignature with the initiator's TIP-712 signature. */
  | { kind: 'initiate'; htlc: string; initiator: string; redeemer: string; timelock: Hex; amount: Hex; secretHash: Hex; signature: Hex }
  /** The solver's own initiate of a destination HTLC. */
  | { kind: 'fund'; htlc: string; redeemer: string; timelock: Hex; amount: Hex; secretHash: Hex }
  /** The solver's one-time unlimited approval of a TRC-20 HTLC. */
  | { kind: 'approve'; token: string; spender: string }
  | { kind: 'redeem'; htlc: string; orderId: Hex; secret: Hex }
  | { kind: 'refund'; htlc: string; orderId: Hex }
  | { kind: 'instant-refund'; htlc: string; orderId: Hex; signature: Hex };

/** A TVM call: the contract (base58) and its call data (0x hex). */
export interface TronCall {
  contract: string;
  data: Hex;
}

/** The contract call of a job. */
export function jobCall(p: TronJobPayload): TronCall {
  const evm = (address: string) => tronToEvmHex(address);
  switch (p.kind) {
    case 'initiate':
      return {
        contract: p.htlc,
        data: encodeFunctionData({
          abi: htlcAbi,
          functionName: 'initiateWithSignature',
          args: [evm(p.initiator), evm(p.redeemer), BigInt(p.timelock), BigInt(p.amount), p.secretHash, p.signature],
        }),
      };
    case 'fund':
      return { contract: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'initiate', args: [evm(p.redeemer), BigInt(p.timelock), BigInt(p.amount), p.secretHash] }) };
    case 'approve':
      return { contract: p.token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [evm(p.spender), maxUint256] }) };
    case 'redeem':
      return { contract: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'redeem', args: [p.orderId, p.secret] }) };
    case 'refund':
      return { contract: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'refund', args: [p.orderId] }) };
    case 'instant-refund':
      return { contract: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'instantRefund', args: [p.orderId, p.signature] }) };
  }
}

const hexFields: Record<TronJobPayload['kind'], readonly string[]> = {
  initiate: ['timelock', 'amount', 'secretHash', 'signature'],
  fund: ['timelock', 'amount', 'secretHash'],
  approve: [],
  redeem: ['orderId', 'secret'],
  refund: ['orderId'],
  'instant-refund': ['orderId', 'signature'],
};
const addressFields: Record<TronJobPayload['kind'], readonly string[]> = {
  initiate: ['htlc', 'initiator', 'redeemer'],
  fund: ['htlc', 'redeemer'],
  approve: ['token', 'spender'],
  redeem: ['htlc'],
  refund: ['htlc'],
  'instant-refund': ['htlc'],
};

/** Checks a payload read back from the queue; a row written by something else fails loudly, not on chain. */
export function parseTronPayload(value: unknown): TronJobPayload {
  const p = value as Record<string, unknown> | null;
  const kind = p?.kind;
  if (typeof kind !== 'string' || !(kind in hexFields)) throw new Error(`unknown job kind ${String(kind)}`);
  const k = kind as TronJobPayload['kind'];
  for (const f of hexFields[k]) if (!isHex(p![f])) throw new Error(`job ${k}: ${f} is not hex`);
  for (const f of addressFields[k]) {
    if (typeof p![f] !== 'string' || normalizeTronAddress(p![f]) !== p![f]) throw new Error(`job ${k}: ${f} is not a base58 Tron address`);
  }
  // Safety rule 3: a secret is exactly 32 bytes here too, whoever wrote the job.
  if (k === 'redeem' && size(p!.secret as Hex) !== 32) throw new Error('job redeem: the secret is not 32 bytes');
  return p as unknown as TronJobPayload;
}
