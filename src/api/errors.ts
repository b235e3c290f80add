import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../errors.ts';
import { fieldPath } from '../config/schema-check.ts';

/** The one place error codes become HTTP statuses. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  body: 'body field',
  headers: 'header',
};

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { errorMessage?: string };
}

/** Turns a Fastify schema-validation error into an AppError that names the field. */
export function validationError(error: FastifyError): AppError {
  const issue = error.validation?.[0] as ValidationIssue | undefined;
  const where = CONTEXT_NAMES[error.validationContext ?? ''] ?? 'field';
  if (!issue) return new AppError('invalid_request', error.message);
  const missing = issue.keyword === 'required' ? String(issue.params.missingProperty) : undefined;
  const field = fieldPath(issue.instancePath, missing);
  let problem: string;
  if (missing !== undefined) problem = 'is required';
  else if (issue.keyword === 'enum') problem = `must be one of: ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  else problem = issue.parentSchema?.errorMessage ?? issue.message ?? 'is invalid';
  return new AppError('invalid_request', `invalid ${where} '${field}': ${problem}`);
}

/** Maps any thrown error to a status and a message; only AppErrors and client errors reach clients as-is. */
export function toHttpError(error: unknown): { status: number; code: ErrorCode; message: string } {
  if (error instanceof AppError) return { status: HTTP_STATUS[error.code], code: error.code, message: error.message };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const appError = validationError(fastifyError);
    return { status: 400, code: appError.code, message: appError.message };
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    const code: ErrorCode = status === 404 ? 'not_found' : status === 429 ? 'rate_limited' : 'invalid_request';
    return { status: code === 'invalid_request' ? 400 : status, code, message: fastifyError.message };
  }
  return { status: 500, code: 'internal', message: 'internal error' };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers failures as `{error}` without the envelope (the quote read, as the spec says). */
    bareErrors?: boolean;
  }
}

/** Errors the router raises before a route is chosen (a path parameter too long, a malformed URL). */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const bare = request.url.startsWith('/v3/quote/');
  const text = error.message.length > 200 ? `${error.message.slice(0, 200)}...` : error.message;
  const message = `invalid request path: ${text}`;
  void reply.code(400).send(bare ? { error: message } : { status: 'Error', error: message, code: 'invalid_request' });
}

/** Fastify error handler: the envelope `{status:"Error", error, code}` (the quote read: `{error}`). */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, code, message } = toHttpError(error);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  const bare = request.routeOptions.config?.bareErrors === true;
  return reply.code(status).send(bare ? { error: message } : { status: 'Error', error: message, code });
}
