import {
  isSolanaError,
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
} from '@solana/kit';
import { safeErrorText } from '../../errors.ts';

/**
 * What a Solana failure was, short and safe for logs and `last_error` (safety rule 7: kit's errors
 * can carry whole transactions): a program's custom error by number, a refused simulation with the
 * last line the program logged, a transaction error as the RPC names it.
 */
export function describeSolanaError(err: unknown): string {
  if (isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
    const logs = (err.context.logs ?? []).filter((l) => /error|failed|panicked/i.test(l));
    const last = logs.at(-1);
    return `simulation failed: ${describeSolanaError(err.cause)}${last ? ` (${cut(last)})` : ''}`;
  }
  if (isSolanaError(err, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM)) {
    return `instruction ${err.context.index}: custom program error ${err.context.code}`;
  }
  if (isSolanaError(err)) return cut(err.message);
  if (err instanceof TypeError && err.cause instanceof Error) return cut(`${err.message}: ${safeErrorText(err.cause)}`);
  if (err !== null && typeof err === 'object' && !(err instanceof Error)) return cut(JSON.stringify(err, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  return cut(safeErrorText(err));
}

/** The chain has already run this very transaction (a resend of one that landed). */
export function isAlreadyProcessed(err: unknown): boolean {
  return (
    isSolanaError(err, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED) ||
    (isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE) && isAlreadyProcessed(err.cause))
  );
}

/** The node could not be asked (down, not answering in time, or answering HTTP errors): nothing was judged, nothing used up. */
export function isNodeUnreachable(err: unknown): boolean {
  if (isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) return true;
  if (err instanceof DOMException && err.name === 'TimeoutError') return true;
  return err instanceof TypeError && /fetch failed/i.test(err.message);
}

const cut = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);
