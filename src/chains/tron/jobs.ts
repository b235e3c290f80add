import type { Hex } from 'viem';
import { htlcJobCall, parseHtlcJobPayload, type HtlcJobPayload } from '../solidity-htlc/job-calls.ts';
import { normalizeTronAddress, tronToEvmHex } from './address.ts';

/**
 * What a Tron job does, fixed when it is enqueued: the driver only encodes, signs and sends it. The
 * HTLC jobs of every Solidity HTLC chain (`HtlcJobPayload`), with contracts and parties as base58 Tron
 * addresses (what people and explorers read).
 */
export type TronJobPayload = HtlcJobPayload<string>;

/** A TVM call: the contract (base58) and its call data (0x hex). */
export interface TronCall {
  contract: string;
  data: Hex;
}

/** The contract call of a job: its addresses 20-byte in the call data. */
export function jobCall(p: TronJobPayload): TronCall {
  const { to, data } = htlcJobCall(p, tronToEvmHex);
  return { contract: to, data };
}

/** Checks a payload read back from the queue; a row written by something else fails loudly, not on chain. */
export const parseTronPayload = (value: unknown): TronJobPayload =>
  parseHtlcJobPayload<TronJobPayload>(value, { is: (a) => normalizeTronAddress(a) === a, description: 'a base58 Tron address' });
