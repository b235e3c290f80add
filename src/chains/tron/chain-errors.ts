import { decodeErrorResult, toFunctionSelector, type Hex } from 'viem';
import { redactHex, safeErrorText } from '../../errors.ts';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';
import { TronNodeUnreachable } from './api.ts';

/** The node could not be asked (down, slow, HTTP 5xx or 429): nothing was judged, no attempt is used up. */
export const isNodeUnreachable = (err: unknown): boolean => err instanceof TronNodeUnreachable;

/**
 * A revert's custom error by name, when the node's message carries its ABI encoding (a 4-byte
 * selector and its arguments): the HTLC's and the TRC-20's errors; else the message itself.
 */
export function revertReason(message: string): string {
  const data = /0x[0-9a-fA-F]{8}(?:[0-9a-fA-F]{64})*/.exec(message)?.[0];
  if (data) {
    try {
      return `reverted: ${decodeErrorResult({ abi: htlcAbi, data: data as Hex }).errorName}`;
    } catch {
      // Its arguments cut or not ABI-encoded: the selector alone still names one of ours.
      const named = ERRORS_BY_SELECTOR.get(data.slice(0, 10).toLowerCase() as Hex);
      if (named) return `reverted: ${named}`;
    }
  }
  return message;
}

const ERRORS_BY_SELECTOR = new Map(
  htlcAbi
    .filter((item): item is Extract<(typeof htlcAbi)[number], { type: 'error' }> => item.type === 'error')
    .map((e) => [toFunctionSelector(`${e.name}(${(e.inputs as ReadonlyArray<{ type: string }>).map((i) => i.type).join(',')})`), e.name] as const),
);

/** A short, safe description of a Tron error for `last_error` and logs (safety rule 7: no long hex, such as a secret). */
export function describeTronError(err: unknown): string {
  // Tron writes hex without 0x: any long run of hex digits is cut as well.
  return redactHex(safeErrorText(err)).replace(/[0-9a-fA-F]{64,}/g, '…').slice(0, 300);
}
