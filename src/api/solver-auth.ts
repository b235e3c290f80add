import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { Db } from '../store/database.ts';
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
 * is not revoked. Looked up on every request (solvers make few), so a revoked key stops at once.
 */
export function solverAuth(db: Db) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = request.headers[SOLVER_KEY_HEADER];
    const key = (Array.isArray(header) ? header[0] : header) || undefined;
    if (!key) throw new AppError('unauthorized', `missing solver key: send it in the ${SOLVER_KEY_HEADER} header`);
    const solver = await findSolverByKey(db, key);
    if (!solver) throw new AppError('unauthorized', 'unknown or revoked solver key');
    request.solver = solver;
  };
}
