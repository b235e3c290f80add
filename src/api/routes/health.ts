import type { FastifyInstance, FastifyReply } from 'fastify';
import { ping } from '../../store/database.ts';
import type { ApiContext } from '../context.ts';

export function healthRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const handler = async (_request: unknown, reply: FastifyReply) => {
    try {
      await ping(ctx.db);
      return { status: 'Ok', result: { database: 'ok', version: ctx.version } };
    } catch {
      return reply.code(503).send({ status: 'Error', result: { database: 'unreachable', version: ctx.version } });
    }
  };
  const schema = {
    summary: 'Liveness and database reachability (no API key)',
    tags: ['service'],
    response: { 200: { $ref: 'Health' }, 503: { $ref: 'Health' } },
  };
  app.get('/health', { schema }, handler);
  app.get('/v2/health', { schema: { ...schema, hide: true } }, handler);
}
