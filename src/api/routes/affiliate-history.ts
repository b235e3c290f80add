import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { affiliateHistory } from '../../affiliates/history.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

const HistoryQuery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
    per_page: Type.Integer({ minimum: 1, maximum: 500, default: 10, description: 'Entries per page' }),
  },
  { additionalProperties: false },
);

export function affiliateHistoryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { auth } = ctx;

  // Garden's document (servers .../v2) has it at /v2/affiliates/history; v3 too, as the earnings read.
  for (const version of ['v2', 'v3'] as const) app.get<{ Querystring: Static<typeof HistoryQuery> }>(
    `/${version}/affiliates/history`,
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "Credits and debits of the affiliates the calling app's orders paid",
        description:
          "Newest first. A credit is one affiliate fee of one of the app's orders, when it accrued (the order " +
          'completed); its id is the order id. A debit is one claim the claim contract paid an affiliate in a ' +
          'fee asset the app has earnings for, read from the chain; its id is the claim transaction hash. The ' +
          'contract pays an affiliate what it earned through every app, so the same debit shows in each app ' +
          'whose orders paid that affiliate in that asset. Chains without a claim contract have no debits. ' +
          'USD values are at current prices.',
        tags: ['affiliates'],
        querystring: HistoryQuery,
        response: { 200: Ok(Type.Ref('PaginatedAffiliateHistory')), ...errorResponses(400, 401, 503) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      return { status: 'Ok', result: await affiliateHistory(ctx, request.app!.id, page, per_page) };
    },
  );
}
