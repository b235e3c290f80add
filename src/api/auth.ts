import type { FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import { findAppByKey, type App } from '../store/apps.ts';
import type { Db } from '../store/database.ts';

export const API_KEY_HEADER = 'service-app-id';
/** Existing Garden clients send this name. */
export const API_KEY_HEADER_ALIAS = 'garden-app-id';

declare module 'fastify' {
  interface FastifyRequest {
    app?: App;
  }
}

/**
 * Resolves API keys to apps, remembering answers (unknown keys too, so bad keys cannot flood the
 * database) for `ttlMs`. A disabled key therefore stops working within that time.
 */
export class ApiKeyAuth {
  private readonly cache = new Map<string, { app: App | undefined; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
    private readonly clock: Clock = systemClock,
  ) {}

  async resolve(key: string): Promise<App | undefined> {
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.app;
    const app = await findAppByKey(this.db, key);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(key, { app, until: now + this.ttlMs });
    return app;
  }

  /**
   * Fastify onRequest hook of every keyed route: 401 unless the request carries a known key. It runs
   * before the body is read and before any validation, so a caller without a key learns nothing else.
   */
  readonly onRequest = async (request: FastifyRequest): Promise<void> => {
    const key = requestKey(request);
    if (!key) throw new AppError('unauthorized', `missing API key: send it in the ${API_KEY_HEADER} header`);
    const app = await this.resolve(key);
    if (!app) throw new AppError('unauthorized', 'unknown API key');
    request.app = app;
  };
}

/** The API key a request carries, in either header. */
export function requestKey(request: FastifyRequest): string | undefined {
  const header = request.headers[API_KEY_HEADER] ?? request.headers[API_KEY_HEADER_ALIAS];
  return (Array.isArray(header) ? header[0] : header) || undefined;
}
