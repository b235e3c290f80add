import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { toUsd } from '../../pricing/amounts.ts';
import { listEarnings } from '../../store/affiliates.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

export function earningsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry, prices, auth } = ctx;

  // Garden serves it under both versions, in one shape.
  for (const version of ['v2', 'v3'] as const) app.get(
    `/${version}/apps/earnings`,
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "Affiliate earnings of the calling app's orders",
        description:
          "One entry per affiliate and fee asset the calling app's orders paid fees in. Fees accrue when an order " +
          'completes. The claim contract pays per affiliate and token, whichever app earned it, so the amounts ' +
          "are over every app's orders: claim_signature covers total_earnings, the cumulative amount FeeClaim's " +
          '`claim(affiliate, token, total_earnings, claim_signature)` takes. An API instance without the fee ' +
          'signer key serves the claim the workers signed, which they do within seconds of new fees: until ' +
          'then the claim_* fields are left out. They appear while total_earnings exceeds what was claimed and ' +
          'a claim contract is deployed on that chain.',
        tags: ['affiliates'],
        response: { 200: Ok(Type.Array(Type.Ref('EarningsEntry'))), ...errorResponses(401) },
      },
    },
    async (request) => {
      const rows = await listEarnings(db, request.app!.id);
      const result = await Promise.all(rows.map(async (row) => {
        const asset = registry.asset(row.asset);
        const decimals = asset?.decimals ?? 0;
        const price = asset ? (prices.usdPrice(asset.priceId) ?? 0) : 0;
        const claim = await ctx.claims?.claimFor(row);
        return {
          total_earnings: row.totalEarned.toString(),
          total_earnings_usd: toUsd(row.totalEarned, decimals, price),
          affiliate: row.affiliate,
          asset: row.asset,
          token_address: asset?.token.address ?? '',
          ...(claim
            ? {
                claim_amount: claim.amount.toString(),
                claim_amount_usd: toUsd(claim.amount, decimals, price),
                claim_signature: claim.signature,
                claim_contract: claim.contract,
              }
            : {}),
        };
      }));
      return { status: 'Ok', result };
    },
  );
}
