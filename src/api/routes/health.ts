import type { FastifyInstance, FastifyReply } from 'fastify';
import { ping } from '../../store/database.ts';
import type { ApiContext } from '../context.ts';

export function healthRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const handler = async (_request: unknown, reply: FastifyReply) => {
    // A chain node out of reach degrades the service but does not fail liveness: the work waits for it.
    const degraded = ctx.nodeHealth?.degraded() ?? [];
    const chains = degraded.length > 0 ? { chains: degraded.map((p) => ({ ...p, status: 'degraded' as const })) } : {};
    try {
      await ping(ctx.db);
      return { status: 'Ok', result: { database: 'ok', version: ctx.version, ...chains } };
    } catch {
      return reply.code(503).send({ status: 'Error', result: { database: 'unreachable', version: ctx.version, ...chains } });
    }
  };
  const schema = {
    summary: 'Liveness and database reachability (no API key)',
    tags: ['service'],
    response: { 200: { $ref: 'Health' }, 503: { $ref: 'Health' } },
  };
  app.get('/health', { schema }, handler);
}
