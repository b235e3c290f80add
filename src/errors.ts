/**
 * The one error type of the service. Every failure a caller can cause is an AppError with a stable
 * code; the API maps codes to HTTP statuses in one place (src/api/errors.ts).
 */
export const ERROR_CODES = [
  // 400: the request cannot be carried out as sent
  'invalid_request', // malformed or out-of-range input; the message names the field
  'invalid_signature', // a signature that does not verify, or not by the party it must be from
  'secret_mismatch', // a secret whose sha256 is not the order's secret_hash
  'amount_out_of_range', // an amount outside the pair's minimum and maximum
  'slippage_exceeded', // a destination amount above what the price and the slippage allow
  'insufficient_liquidity', // no solver can pay the destination amount now
  'no_route', // no solver quotes this pair (or not the solver asked for)
  'route_refused', // the operator's route policy refuses this pair
  'not_supported', // an action or chain this service does not settle (yet), or that has nothing to relay
  'unauthorized', // 401: missing or unknown API key
  'forbidden', // 403: the app may not do this (e.g. gasless without the gasless flag)
  'not_found', // 404: no such resource
  'method_not_allowed', // 405: the resource takes other methods (GET /mcp: the MCP endpoint is POST only)
  'request_timeout', // 408: the request did not arrive in time
  // 409: not allowed in the current state
  'conflict', // a duplicate, or a state not named below
  'deadline_passed', // the order's deadline has passed: its source may no longer be initiated
  'already_initiated', // the HTLC is funded already
  'not_initiated', // the HTLC is not funded (yet)
  'already_settled', // the HTLC is redeemed or refunded already
  'not_expired', // the HTLC's timelock has not run out
  'instant_refund_closed', // the destination is funded (or being funded): no instant refund
  'action_failed', // the relayer could not carry the action out (its transaction failed for good)
  'quote_closed', // a solver's answer to a quote request after its deadline
  'idempotency_key_reuse', // an Idempotency-Key sent before with a different body
  'provider_rejected', // 422: the transaction reported for an order is not one its chain could have
  'payload_too_large', // 413: the body is over the size limit
  'rate_limited', // 429: too many requests for the app or the client address
  'headers_too_large', // 431: the request headers are over the size limit
  'unavailable', // 503: a dependency of the service (the database) is down
  'chain_unavailable', // 503: the chain's node is out of reach, or none is configured
  'internal', // 500: a real fault
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
  }
}

export const invalid = (message: string): AppError => new AppError('invalid_request', message);
export const notFound = (message: string): AppError => new AppError('not_found', message);
export const conflict = (message: string): AppError => new AppError('conflict', message);

/** Longest echo of a caller's value in an error message. */
const MAX_SHOWN = 100;

/** A caller's value as an error message may echo it: cut to about 100 characters. */
export function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text;
}

/** Hex strings longer than a 32-byte word become `0x…`: a secret is 32 bytes, but calldata carries it inside more (safety rule 7). */
export function redactHex(text: string): string {
  return text.replace(/0x[0-9a-fA-F]{65,}/g, '0x…');
}

/** A short description of any error, safe for logs: its message, long hex strings cut (safety rule 7). */
export function safeErrorText(err: unknown): string {
  return redactHex(err instanceof Error ? err.message : String(err)).slice(0, 500);
}

/**
 * Whether `fetch` failed somewhere in the error's causes: a request every chain node's client (viem,
 * Solana Kit, the Tron and Bitcoin RPC clients) makes over HTTP, so a node out of reach, never the
 * database (which speaks its own protocol), even when the cause is the same refused connection.
 */
export function isFetchFailure(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 5) return false;
  return (err instanceof TypeError && err.message === 'fetch failed') || isFetchFailure(err.cause, depth + 1);
}
