import { encodeFunctionData, erc20Abi, isHex, maxUint256, size, type Address, type Hex } from 'viem';
import { htlcAbi } from './htlc-abi.ts';

/**
 * What a job on a Solidity HTLC chain (EVM, Tron) does, fixed when it is enqueued: the driver only
 * encodes, signs and sends it. `A` is how the family writes an address in its jobs (EVM: checksummed
 * 0x; Tron: base58); numbers, hashes and signatures are hex strings, so the payload survives its JSON
 * column unchanged.
 */
export type HtlcJobPayload<A extends string> =
  /** The relayer's gasless initiate: initiateWithSignature with the initiator's EIP-712 (TIP-712) signature. */
  | { kind: 'initiate'; htlc: A; initiator: A; redeemer: A; timelock: Hex; amount: Hex; secretHash: Hex; signature: Hex }
  /** The solver's own initiate of a destination HTLC. */
  | { kind: 'fund'; htlc: A; redeemer: A; timelock: Hex; amount: Hex; secretHash: Hex }
  /** The solver's one-time unlimited approval of a token HTLC. */
  | { kind: 'approve'; token: A; spender: A }
  | { kind: 'redeem'; htlc: A; orderId: Hex; secret: Hex }
  | { kind: 'refund'; htlc: A; orderId: Hex }
  | { kind: 'instant-refund'; htlc: A; orderId: Hex; signature: Hex };

/** A job's contract call: the contract, as the job names it, and the call data. */
export interface HtlcJobCall<A extends string> {
  to: A;
  data: Hex;
}

/** The contract call of a job; `vm` writes a job's address as the contract's ABI takes it (20 bytes). */
export function htlcJobCall<A extends string>(p: HtlcJobPayload<A>, vm: (address: A) => Address): HtlcJobCall<A> {
  switch (p.kind) {
    case 'initiate':
      return {
        to: p.htlc,
        data: encodeFunctionData({
          abi: htlcAbi,
          functionName: 'initiateWithSignature',
          args: [vm(p.initiator), vm(p.redeemer), BigInt(p.timelock), BigInt(p.amount), p.secretHash, p.signature],
        }),
      };
    case 'fund':
      return { to: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'initiate', args: [vm(p.redeemer), BigInt(p.timelock), BigInt(p.amount), p.secretHash] }) };
    case 'approve':
      return { to: p.token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [vm(p.spender), maxUint256] }) };
    case 'redeem':
      return { to: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'redeem', args: [p.orderId, p.secret] }) };
    case 'refund':
      return { to: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'refund', args: [p.orderId] }) };
    case 'instant-refund':
      return { to: p.htlc, data: encodeFunctionData({ abi: htlcAbi, functionName: 'instantRefund', args: [p.orderId, p.signature] }) };
  }
}

type Kind = HtlcJobPayload<string>['kind'];

const HEX_FIELDS: Record<Kind, readonly string[]> = {
  initiate: ['timelock', 'amount', 'secretHash', 'signature'],
  fund: ['timelock', 'amount', 'secretHash'],
  approve: [],
  redeem: ['orderId', 'secret'],
  refund: ['orderId'],
  'instant-refund': ['orderId', 'signature'],
};
const ADDRESS_FIELDS: Record<Kind, readonly string[]> = {
  initiate: ['htlc', 'initiator', 'redeemer'],
  fund: ['htlc', 'redeemer'],
  approve: ['token', 'spender'],
  redeem: ['htlc'],
  refund: ['htlc'],
  'instant-refund': ['htlc'],
};

/** How a family writes addresses in its jobs, for `parseHtlcJobPayload`. */
export interface JobAddressForm {
  /** Whether `value` is an address as the family's jobs hold it. */
  is(value: string): boolean;
  /** What one is, for the error: "an address". */
  description: string;
}

/**
 * Checks a payload read back from the queue; a row written by something else fails loudly, not on
 * chain. `extraHex` names hex fields a family adds to a kind (EVM: a funding's `value`).
 */
export function parseHtlcJobPayload<P extends { kind: Kind }>(value: unknown, address: JobAddressForm, extraHex: Partial<Record<Kind, readonly string[]>> = {}): P {
  const p = value as Record<string, unknown> | null;
  const kind = p?.kind;
  if (typeof kind !== 'string' || !(kind in HEX_FIELDS)) throw new Error(`unknown job kind ${String(kind)}`);
  const k = kind as Kind;
  for (const f of [...HEX_FIELDS[k], ...(extraHex[k] ?? [])]) if (!isHex(p![f])) throw new Error(`job ${k}: ${f} is not hex`);
  for (const f of ADDRESS_FIELDS[k]) if (typeof p![f] !== 'string' || !address.is(p![f])) throw new Error(`job ${k}: ${f} is not ${address.description}`);
  // Safety rule 3: a secret is exactly 32 bytes here too, whoever wrote the job.
  if (k === 'redeem' && size(p!.secret as Hex) !== 32) throw new Error('job redeem: the secret is not 32 bytes');
  return p as unknown as P;
}
