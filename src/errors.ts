/**
 * The one error type of the service. Every failure a caller can cause is an AppError with a stable
 * code; the API maps codes to HTTP statuses in one place (src/api/errors.ts).
 */
export const ERROR_CODES = [
  'invalid_request', // 400: malformed or out-of-range input
  'unauthorized', // 401: missing or unknown API key
  'forbidden', // 403: the app may not do this (e.g. gasless without the gasless flag)
  'not_found', // 404: no such resource
  'conflict', // 409: not allowed in the current state, or a duplicate
  'rate_limited', // 429
  'unavailable', // 503: a dependency (database, chain node) is down
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
