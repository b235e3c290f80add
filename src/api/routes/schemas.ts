import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { contractSchemas } from '../../chains/adapters.ts';
import { HTLC_SCHEMAS, TOKEN_SCHEMAS } from '../../chains/registry-schema.ts';
import { notFound } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

const ContractSchema = Type.Object(
  {
    name: Type.String({ description: 'The schema name, as the asset list gives it (htlc.schema, token.schema)' }),
    schema: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'The contract ABI' }),
  },
  { description: "A contract's schema" },
);

/** GET /v2|v3/schemas: the ABIs of the contracts the asset list names, by schema name (Garden's shape). */
export function schemaRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const served = contractSchemas();
  // Fixed for the process's life: serialized once.
  const list = JSON.stringify({ status: 'Ok', result: served });
  const byName = new Map(served.map((s) => [s.name, JSON.stringify({ status: 'Ok', result: s })]));
  const names = [...HTLC_SCHEMAS, ...TOKEN_SCHEMAS];

  for (const version of ['v2', 'v3'] as const) {
    app.get(
      `/${version}/schemas`,
      {
        onRequest: ctx.auth.onRequest,
        schema: {
          summary: 'Contract schemas',
          description: `The ABI of each contract schema the service has one for: ${served.map((s) => s.name).join(', ')}.`,
          tags: ['chains'],
          response: { 200: Ok(Type.Array(ContractSchema)), ...errorResponses(401) },
        },
      },
      async (_request, reply) => reply.type('application/json; charset=utf-8').send(list),
    );
    app.get<{ Params: { name: string } }>(
      `/${version}/schemas/:name`,
      {
        onRequest: ctx.auth.onRequest,
        schema: {
          summary: 'One contract schema',
          description: 'The ABI of one contract schema; 404 for a schema the service has none for (a Solana program: no IDL is served).',
          tags: ['chains'],
          params: Type.Object({ name: Type.String({ enum: names, description: 'A schema name of the asset list' }) }),
          response: { 200: Ok(ContractSchema), ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const body = byName.get(request.params.name);
        if (!body) throw notFound(`no schema for ${request.params.name}: this service has the ABIs of ${served.map((s) => s.name).join(', ')}`);
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );
  }
}
