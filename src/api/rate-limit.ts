import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { requestKey, type ApiKeyAuth } from './auth.ts';

/** At most `max` requests per `windowMs` for one bucket. */
export interface Limit {
  max: number;
  windowMs: number;
}

export interface RateLimits {
  /** A request with a valid API key counts against its app. */
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

/**
 * Counts every request, before authentication, in one bucket: its app's when it carries a key this
 * instance has already resolved, else its client address's (so floods of wrong keys are limited
 * too, and cost no database lookup once over the limit). Over the limit: 429 in the envelope with
 * Retry-After. Counters live in this instance's memory: N instances allow N times the limit.
 */
export async function registerRateLimits(app: FastifyInstance, auth: ApiKeyAuth, limits: RateLimits): Promise<void> {
  const bucket = (request: FastifyRequest): { key: string; limit: Limit } => {
    const key = requestKey(request);
    const known = key === undefined ? undefined : auth.knownApp(key);
    return known ? { key: `app:${known.id}`, limit: limits.perKey } : { key: `ip:${request.ip}`, limit: limits.perAddress };
  };
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `too many requests: at most ${context.max} in ${context.after}; retry after the time in Retry-After`),
  });
  const limiter = app.rateLimit({
    keyGenerator: (request) => bucket(request).key,
    max: (request) => bucket(request).limit.max,
    timeWindow: (request) => bucket(request).limit.windowMs,
    allowList: (request) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? ''),
  });
  app.addHook('onRequest', limiter);
}
