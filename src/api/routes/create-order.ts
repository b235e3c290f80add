import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { invalid } from '../../errors.ts';
import type { CreateOrderBody } from '../../orders/create-order.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

const BaseUnits = Type.String({ pattern: '^[0-9]{1,78}$', errorMessage: 'must be a string of base units (a whole number)' });
const Text = (description: string) => Type.String({ minLength: 1, maxLength: 256, description });

const Side = (delegate: string) =>
  Type.Object({
    asset: Text('Asset id <chain>:<symbol>'),
    owner: Text('The client address on this chain: pays on the source, is paid on the destination'),
    amount: BaseUnits,
    delegate: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: delegate })),
  });

const CreateOrderBodySchema = Type.Object({
  source: Side('Bitcoin family: the client x-only key in the refund leaves (absent: the service holds one)'),
  destination: Side('Bitcoin family: the client x-only key in the redeem leaf (absent: the service holds one)'),
  slippage: Type.Optional(Type.Integer({ description: 'Bips; default: the app setting' })),
  nonce: Type.Optional(
    Type.Union([Type.String({ maxLength: 128 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })], {
      description: 'Makes creation idempotent per app: a string, or a whole number up to 2^53 - 1',
      errorMessage: 'must be a string or a whole number from 0 to 2^53 - 1',
    }),
  ),
  solver_id: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
  secret_hash: Type.Optional(
    Type.Union([Type.String({ maxLength: 66 }), Type.Null()], {
      description: 'sha256(secret), 64 hex: the client keeps the secret and redeems. Absent: the service makes one',
    }),
  ),
  affiliate_fees: Type.Optional(
    Type.Union([
      Type.Array(
        Type.Object({
          address: Text('Affiliate address on the fee asset chain'),
          fee: Type.Integer({ description: 'Bips of the source amount' }),
          asset: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Fee asset; default: the first configured' })),
        }),
        { maxItems: 16 },
      ),
      Type.Null(),
    ]),
  ),
});

/** JSON numbers cannot carry large amounts exactly: amounts must arrive as strings, before any coercion. */
function requireStringAmounts(body: unknown): void {
  if (!body || typeof body !== 'object') return;
  for (const side of ['source', 'destination'] as const) {
    const amount = (body as Record<string, { amount?: unknown } | undefined>)[side]?.amount;
    if (amount !== undefined && typeof amount !== 'string') {
      throw invalid(`invalid body field '${side}.amount': must be a string of base units (a whole number)`);
    }
  }
}

export function createOrderRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Body: CreateOrderBody }>(
    '/v2/orders',
    {
      onRequest: ctx.auth.onRequest,
      preValidation: async (request) => requireStringAmounts(request.body),
      schema: {
        summary: 'Create an order',
        description:
          'Validates every field, prices the order against the solvers, reserves liquidity and returns the ' +
          'signing data of the source chain. The same app and nonce return the same order (200); a new order is 201.',
        tags: ['orders'],
        body: CreateOrderBodySchema,
        response: { 200: Ok(Type.Ref('CreatedOrder')), 201: Ok(Type.Ref('CreatedOrder')), ...errorResponses(400, 401, 409, 503) },
      },
    },
    async (request, reply) => {
      const { created, result } = await ctx.orderCreator.create(request.app!, request.body);
      return reply.code(created ? 201 : 200).send({ status: 'Ok', result });
    },
  );
}
