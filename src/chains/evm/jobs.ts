import { encodeFunctionData, erc20Abi, isAddress, isHex, maxUint256, size, type Address, type Hex } from 'viem';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';

/**
 * What a job does, fixed when it is enqueued: the worker only encodes and sends it. Every field is a
 * hex string so the payload survives its JSON column unchanged.
 */
export type JobPayload =
  | {
      kind: 'initiate';
      htlc: Address;
      initiator: Address;
      redeemer: Address;
      timelock: Hex;
      amount: Hex;
      secretHash: Hex;
      signature: Hex;
    }
  /** The solver's own initiate of a destination HTLC; `value` carries the amount on a native HTLC. */
  | { kind: 'fund'; htlc: Address; redeemer: Address; timelock: Hex; amount: Hex; secretHash: Hex; value: Hex }
  /** The solver's one-time unlimited approval of an ERC-20 HTLC. */
  | { kind: 'approve'; token: Address; spender: Address }
  | { kind: 'redeem'; htlc: Address; orderId: Hex; secret: Hex }
  | { kind: 'refund'; htlc: Address; orderId: Hex }
  | { kind: 'instant-refund'; htlc: Address; orderId: Hex; signature: Hex };

export interface EvmCall {
  to: Address;
  data: Hex;
  /** Wei sent with the call (0 unless set). */
  value?: bigint;
}

/** The contract call of a job. */
export function jobCall(p: JobPayload): EvmCall {
  switch (p.kind) {
    case 'initiate':
      return {
        to: p.htlc,
        data: encodeFunctionData({
          abi: htlcAbi,
          functionName: 'initiateWithSignature',
          args: [p.initiator, p.redeemer, BigInt(p.timelock), BigInt(p.amount), p.secretHash, p.signature],
        }),
      };
    case 'fund':
      return {
        to: p.htlc,
        data: encodeFunctionData({ abi: htlcAbi, functionName: 'initiate', args: [p.redeemer, BigInt(p.timelock), BigInt(p.amount), p.secretHash] }),
        value: BigInt(p.value),
      };
    case 'approve':
      return { to: p.token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [p.spender, maxUint256] }) };
    case 'redeem':
      return { to: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'redeem', args: [p.orderId, p.secret] }) };
    case 'refund':
      return { to: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'refund', args: [p.orderId] }) };
    case 'instant-refund':
      return {
        to: p.htlc,
        data: encodeFunctionData({ abi: htlcAbi, functionName: 'instantRefund', args: [p.orderId, p.signature] }),
      };
  }
}

const hexFields: Record<JobPayload['kind'], readonly string[]> = {
  initiate: ['timelock', 'amount', 'secretHash', 'signature'],
  fund: ['timelock', 'amount', 'secretHash', 'value'],
  approve: [],
  redeem: ['orderId', 'secret'],
  refund: ['orderId'],
  'instant-refund': ['orderId', 'signature'],
};
const addressFields: Record<JobPayload['kind'], readonly string[]> = {
  initiate: ['htlc', 'initiator', 'redeemer'],
  fund: ['htlc', 'redeemer'],
  approve: ['token', 'spender'],
  redeem: ['htlc'],
  refund: ['htlc'],
  'instant-refund': ['htlc'],
};

/** Checks a payload read back from the queue; a row written by something else fails loudly, not on chain. */
export function parsePayload(value: unknown): JobPayload {
  const p = value as Record<string, unknown> | null;
  const kind = p?.kind;
  if (typeof kind !== 'string' || !(kind in hexFields)) throw new Error(`unknown job kind ${String(kind)}`);
  const k = kind as JobPayload['kind'];
  for (const f of hexFields[k]) if (!isHex(p![f])) throw new Error(`job ${k}: ${f} is not hex`);
  for (const f of addressFields[k]) if (typeof p![f] !== 'string' || !isAddress(p![f])) throw new Error(`job ${k}: ${f} is not an address`);
  // Safety rule 3: a secret is exactly 32 bytes here too, whoever wrote the job.
  if (k === 'redeem' && size(p!.secret as Hex) !== 32) throw new Error('job redeem: the secret is not 32 bytes');
  return p as unknown as JobPayload;
}
