import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { systemClock, type Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import { findAppByKey, type App } from '../store/apps.ts';
import type { Db } from '../store/database.ts';
import { retryForRequest } from './lost-connection.ts';

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
    const hit = this.remembered(key, now);
    if (hit) return hit.app;
    const app = await retryForRequest(() => findAppByKey(this.db, key));
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(key, { app, until: now + this.ttlMs });
    return app;
  }

  /**
   * Fastify onRequest hook of every keyed route: 401 unless the request carries a known key. It runs
   * before the body is read and before any validation, so a caller without a key learns nothing else.
   */
  readonly onRequest = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const key = requestKey(request);
    if (!key) return done(new AppError('unauthorized', `missing API key: send it in the ${API_KEY_HEADER} header`));
    const admit = (app: App | undefined) => {
      if (!app) return done(new AppError('unauthorized', 'unknown API key'));
      request.app = app;
      done();
    };
    // A remembered key is answered in the same tick: this hook is on every keyed request.
    const hit = this.remembered(key, this.clock.now());
    if (hit) return admit(hit.app);
    this.resolve(key).then(admit, done);
  };

  private remembered(key: string, now: number): { app: App | undefined } | undefined {
    const hit = this.cache.get(key);
    return hit && hit.until > now ? hit : undefined;
  }
}

/** The API key a request carries, in either header. */
export function requestKey(request: FastifyRequest): string | undefined {
  const header = request.headers[API_KEY_HEADER] ?? request.headers[API_KEY_HEADER_ALIAS];
  return (Array.isArray(header) ? header[0] : header) || undefined;
}
