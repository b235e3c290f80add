import type { FastifyReply, FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { Db } from '../store/database.ts';
import { retryForRequest } from './lost-connection.ts';
import { findSolverByKey, type RegisteredSolver } from '../store/solver-registry.ts';

/** The header a registered solver sends its key in (`hashlock solvers register` prints it). */
export const SOLVER_KEY_HEADER = 'solver-key';

declare module 'fastify' {
  interface FastifyRequest {
    solver?: RegisteredSolver;
  }
}

/**
 * onRequest hook of the solver API: 401 unless the request carries the key of a registered solver that
 * is not revoked. Looked up on every request (solvers make few), so a revoked key stops at once; with
 * `cacheMs`, a lookup is reused that long (the answers to quote requests, many per second and each on
 * the clock of a quote: a revoked key's answers stop within that time, as its stream does).
 */
export function solverAuth(db: Db, options: { cacheMs?: number; clock?: Clock } = {}) {
  const cacheMs = options.cacheMs ?? 0;
  const clock = options.clock ?? systemClock;
  const cache = new Map<string, { solver: RegisteredSolver | undefined; until: number }>();
  const lookup = async (key: string): Promise<RegisteredSolver | undefined> => {
    if (cacheMs === 0) return retryForRequest(() => findSolverByKey(db, key));
    const now = clock.now();
    const cached = cache.get(key);
    if (cached && cached.until > now) return cached.solver;
    const solver = await retryForRequest(() => findSolverByKey(db, key));
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, { solver, until: now + cacheMs });
    return solver;
  };
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = request.headers[SOLVER_KEY_HEADER];
    const key = (Array.isArray(header) ? header[0] : header) || undefined;
    if (!key) throw new AppError('unauthorized', `missing solver key: send it in the ${SOLVER_KEY_HEADER} header`);
    const solver = await lookup(key);
    if (!solver) throw new AppError('unauthorized', 'unknown or revoked solver key');
    request.solver = solver;
  };
}

/** Keys remembered at most: more (unknown keys tried in a flood) empty the cache. */
const MAX_CACHED = 10_000;
