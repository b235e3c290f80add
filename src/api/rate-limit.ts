import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { API_KEY_PATTERN, type RequestLimit } from '../store/apps.ts';
import { requestKey, type ApiKeyAuth } from './auth.ts';
import type { InProcessRequests } from './in-process.ts';

/** At most `max` requests per `windowMs` for one bucket. */
export type Limit = RequestLimit;

export interface RateLimits {
  /** A request with a valid API key counts against its app: the app's own limit, else this. */
  perKey: Limit;
  /** Every other request (no key, an unknown key) counts against the client address. */
  perAddress: Limit;
}

export const DEFAULT_RATE_LIMITS: RateLimits = {
  perKey: { max: 3_000, windowMs: 10_000 },
  perAddress: { max: 300, windowMs: 10_000 },
};

/** Operators' probes are never limited. */
const UNLIMITED_ROUTES = new Set(['/health', '/v2/health', '/v3/health', '/metrics']);

declare module 'fastify' {
  interface FastifyRequest {
    rateBucket?: { key: string; limit: Limit };
  }
}

/**
 * Counts every request, before authentication, in one bucket: its app's when it carries a valid key
 * (from the key's first request: a key not seen before is looked up first, one indexed read, then
 * cached either way by `ApiKeyAuth`), else its client address's, so floods of wrong keys are limited
 * without ever spending a valid app's budget. An app's own limit (`hashlock apps rate-limit`) replaces
 * the per-key default, within the key cache's 30 s. Over the limit: 429 in the envelope with
 * Retry-After. Counters live in this instance's memory: N instances allow N times the limit.
 * The process's own requests of its routes (`inProcess`: an MCP tool call) are not counted: the
 * `/mcp` request that carried them was.
 */
export async function registerRateLimits(app: FastifyInstance, auth: ApiKeyAuth, limits: RateLimits, inProcess: InProcessRequests): Promise<void> {
  const bucketOf = async (request: FastifyRequest): Promise<{ key: string; limit: Limit }> => {
    const key = requestKey(request);
    // A malformed key is no app's: no lookup.
    const valid = key !== undefined && API_KEY_PATTERN.test(key) ? await auth.resolve(key) : undefined;
    return valid ? { key: `app:${valid.id}`, limit: valid.rateLimit ?? limits.perKey } : { key: `ip:${request.ip}`, limit: limits.perAddress };
  };
  const unlimited = (request: FastifyRequest) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? '') || inProcess.is(request);
  const bucket = (request: FastifyRequest) => request.rateBucket ?? { key: `ip:${request.ip}`, limit: limits.perAddress };
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `too many requests: at most ${context.max} in ${context.after}; retry after the time in Retry-After`),
  });
  const limiter = app.rateLimit({
    keyGenerator: (request) => bucket(request).key,
    max: (request) => bucket(request).limit.max,
    timeWindow: (request) => bucket(request).limit.windowMs,
    allowList: (request) => unlimited(request),
  });
  app.addHook('onRequest', async (request) => {
    if (unlimited(request)) return;
    request.rateBucket = await bucketOf(request);
  });
  app.addHook('onRequest', limiter);
}
