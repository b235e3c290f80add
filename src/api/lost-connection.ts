import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { retryWhileUnreachable } from '../store/database.ts';

/**
 * How long a request keeps trying for a database connection before it answers 503 (with
 * Retry-After): a connection terminated under it is replaced at once, so only a database out of
 * reach for this long is the client's to wait out.
 */
export const REQUEST_RETRY_MS = 5_000;

/** Seconds a 503 tells the client to wait (Retry-After). */
export const RETRY_AFTER_SECONDS = 2;

/** A request's database work, run again on a new connection while the one under it is lost. */
export const retryForRequest = <T>(work: () => Promise<T>): Promise<T> => retryWhileUnreachable(work, { deadline: Date.now() + REQUEST_RETRY_MS });

/**
 * Runs every route's handler again, on a new connection, when the database connection under it was
 * lost: its transaction was rolled back, and the actions are idempotent (an order action returns the
 * job an earlier attempt wrote), so a retry after a commit whose answer was lost is safe. Not once the
 * reply has started (a stream): the client then sees the failure.
 */
export function retryHandlersOnLostConnection(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const handler = route.handler as (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown;
    route.handler = async function retried(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const started = new AbortController();
      return retryWhileUnreachable(
        async () => {
          try {
            return await handler.call(this, request, reply);
          } catch (err) {
            if (reply.sent) started.abort();
            throw err;
          }
        },
        { deadline: Date.now() + REQUEST_RETRY_MS, signal: started.signal },
      );
    };
  });
}
