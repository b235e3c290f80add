import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isFetchFailure, type ErrorCode } from '../errors.ts';
import { describeIssues } from '../validation-issue.ts';
import { isConnectionLoss } from '../store/database.ts';
import { RETRY_AFTER_SECONDS } from './lost-connection.ts';

/** The one place error codes become HTTP statuses. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_signature: 400,
  secret_mismatch: 400,
  amount_out_of_range: 400,
  slippage_exceeded: 400,
  insufficient_liquidity: 400,
  no_route: 400,
  route_refused: 400,
  not_supported: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  deadline_passed: 409,
  already_initiated: 409,
  not_initiated: 409,
  already_settled: 409,
  not_expired: 409,
  instant_refund_closed: 409,
  action_failed: 409,
  quote_closed: 409,
  idempotency_key_reuse: 409,
  provider_rejected: 422,
  payload_too_large: 413,
  rate_limited: 429,
  headers_too_large: 431,
  unavailable: 503,
  chain_unavailable: 503,
  internal: 500,
};

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  body: 'body field',
  headers: 'header',
};

/** Turns a Fastify schema-validation error into an AppError that names the field. */
export function validationError(error: FastifyError): AppError {
  const where = CONTEXT_NAMES[error.validationContext ?? ''] ?? 'field';
  const described = describeIssues(error.validation ?? []);
  if (!described) return new AppError('invalid_request', error.message);
  return new AppError('invalid_request', `invalid ${where} '${described.field}': ${described.problem}`);
}

/** Fastify's own 4xx errors by status; any other is a 400. */
const FRAMEWORK_CODES: Partial<Record<number, ErrorCode>> = { 404: 'not_found', 413: 'payload_too_large', 429: 'rate_limited' };

/** The longest error message sent: longer ones (a framework message quoting input) are cut. */
const MAX_MESSAGE = 1_000;
const capped = (message: string): string => (message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}...` : message);

/** Maps any thrown error to a status and a message; only AppErrors and client errors reach clients as-is. */
export function toHttpError(error: unknown): { status: number; code: ErrorCode; message: string } {
  if (error instanceof AppError) return { status: HTTP_STATUS[error.code], code: error.code, message: capped(error.message) };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const appError = validationError(fastifyError);
    return { status: 400, code: appError.code, message: capped(appError.message) };
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    const code = FRAMEWORK_CODES[status] ?? 'invalid_request';
    return { status: HTTP_STATUS[code], code, message: capped(frameworkMessage(fastifyError)) };
  }
  if (isConnectionLoss(error)) return { status: HTTP_STATUS.unavailable, code: 'unavailable', message: 'the database is unavailable; retry shortly' };
  if (isFetchFailure(error)) return { status: HTTP_STATUS.chain_unavailable, code: 'chain_unavailable', message: "a chain's node is out of reach; retry shortly" };
  return { status: 500, code: 'internal', message: 'internal error' };
}

/** Fastify's messages, in this API's words where the raw one would quote the body back. */
function frameworkMessage(error: FastifyError): string {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'request body too large';
  if (error instanceof SyntaxError) return 'invalid JSON body';
  return error.message;
}

/**
 * Under /v3/quote failures are `{error}` without the envelope, as the spec says of the quote read:
 * on every method and path there, so a client of the quote read never meets another shape.
 */
export function bareErrorsAt(url: string): boolean {
  const path = url.split('?')[0]!;
  return path === '/v3/quote' || path.startsWith('/v3/quote/');
}

/** Requests a shared path decided were the Aggregator API's (`POST /v3/quote` by its body, `GET /v3/orders` by its query). */
const aggregatorRequests = new WeakMap<object, { query: unknown }>();

/**
 * Marks a request as the Aggregator API's, keeping its query as sent: on a shared path the draft's
 * schema check that follows may drop parameters it does not know.
 */
export function markAggregatorRequest(request: FastifyRequest): void {
  if (!aggregatorRequests.has(request.raw)) aggregatorRequests.set(request.raw, { query: { ...(request.query as object) } });
}

/** Whether a shared path's request was marked as the Aggregator API's. */
export const markedAggregator = (request: FastifyRequest): boolean => aggregatorRequests.has(request.raw);

/** The query of a marked request as it was sent. */
export const aggregatorQuery = (request: FastifyRequest): unknown => aggregatorRequests.get(request.raw)?.query ?? request.query;

/** The Aggregator API's own paths (`/v3/registry`, `/v3/routes`, `/v3/orders/ord_...`), or a request marked as its. */
export function isAggregatorRequest(request: FastifyRequest): boolean {
  if (aggregatorRequests.has(request.raw)) return true;
  const path = request.url.split('?')[0]!;
  return path === '/v3/registry' || path === '/v3/routes' || /^\/v3\/orders\/ord_[^/]*(\/submit)?$/.test(path);
}

/** The Aggregator API names a bad key `invalid_key`; its other codes are this service's. */
const AGGREGATOR_CODES: Partial<Record<ErrorCode, string>> = { unauthorized: 'invalid_key' };

/** `{error: {code, message, retryable}}`: retryable when the same request may succeed later (429, 5xx). */
export function aggregatorErrorBody(code: ErrorCode, message: string) {
  const status = HTTP_STATUS[code];
  return { error: { code: AGGREGATOR_CODES[code] ?? code, message, retryable: status === 429 || status >= 500 } };
}

export function errorBody(url: string, code: ErrorCode, message: string): object {
  return bareErrorsAt(url) ? { error: message } : { status: 'Error', error: message, code };
}

/** The error body for `request`: the Aggregator API's shape, `{error}` under /v3/quote, else the envelope. */
function errorBodyFor(request: FastifyRequest, code: ErrorCode, message: string): object {
  return isAggregatorRequest(request) ? aggregatorErrorBody(code, message) : errorBody(request.url, code, message);
}

/** Errors the router raises before a route is chosen (a path parameter too long, a malformed URL). */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const text = error.message.length > 200 ? `${error.message.slice(0, 200)}...` : error.message;
  void reply.code(400).send(errorBodyFor(request, 'invalid_request', `invalid request path: ${text}`));
}

/** Fastify error handler: the envelope `{status:"Error", error, code}` (under /v3/quote: `{error}`). */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, code, message } = toHttpError(error);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  if (status === 503) void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return reply.code(status).send(errorBodyFor(request, code, message));
}

/** Unknown routes: 404 in the envelope. */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]!;
  return reply.code(404).send(errorBodyFor(request, 'not_found', `no route ${request.method.slice(0, 20)} ${path.slice(0, 200)}`));
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a bad request line, headers over the
 * limit, a request too slow to arrive), answered in the envelope instead of Node's own shape.
 */
export function handleClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message]: [ErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['headers_too_large', 'request headers too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['request_timeout', 'the request did not arrive in time']
        : ['invalid_request', `malformed HTTP request${error.code ? ` (${error.code})` : ''}`];
  const status = HTTP_STATUS[code];
  const body = JSON.stringify({ status: 'Error', error: message, code });
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
