import { isAddress, type Address, type Hex } from 'viem';
import { htlcJobCall, parseHtlcJobPayload, type HtlcJobPayload } from '../solidity-htlc/job-calls.ts';

/**
 * What a job does, fixed when it is enqueued: the worker only encodes and sends it. The HTLC jobs of
 * every Solidity HTLC chain (`HtlcJobPayload`), with checksummed 0x addresses; a funding's `value`
 * carries the amount on a native HTLC.
 */
export type JobPayload = Exclude<HtlcJobPayload<Address>, { kind: 'fund' }> | (Extract<HtlcJobPayload<Address>, { kind: 'fund' }> & { value: Hex });

export interface EvmCall {
  to: Address;
  data: Hex;
  /** Wei sent with the call (0 unless set). */
  value?: bigint;
}

/** The contract call of a job. */
export function jobCall(p: JobPayload): EvmCall {
  const call = htlcJobCall<Address>(p, (a) => a);
  return p.kind === 'fund' ? { ...call, value: BigInt(p.value) } : call;
}

/** Checks a payload read back from the queue; a row written by something else fails loudly, not on chain. */
export const parsePayload = (value: unknown): JobPayload =>
  parseHtlcJobPayload<JobPayload>(value, { is: (a) => isAddress(a), description: 'an address' }, { fund: ['value'] });
