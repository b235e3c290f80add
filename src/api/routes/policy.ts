import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

export function policyRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { auth, routePolicy } = ctx;
  // The policy is fixed for the process's life: serialized once.
  const body = JSON.stringify({ status: 'Ok', result: routePolicy.rules });

  // Garden serves it under both versions, in one shape.
  for (const version of ['v2', 'v3'] as const) app.get(
    `/${version}/policy`,
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'The route policy: which asset pairs may be swapped',
        description:
          'The rules quotes and order creation enforce, for clients that check routes locally. ' +
          'A route the policy refuses is answered 400 naming the rule that decided it.',
        tags: ['chains'],
        response: { 200: Ok(Type.Ref('RoutePolicy')), ...errorResponses(401) },
      },
    },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(body),
  );
}
