import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { invalid, shown } from '../../errors.ts';
import { MAX_AFFILIATE_FEE_BIPS, MAX_SLIPPAGE_BIPS } from '../../orders/limits.ts';
import { amountView } from '../../orders/quote-view.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

const Amount = Type.String({ pattern: '^[0-9]{1,78}$', errorMessage: 'must be a whole number of base units' });


interface QuoteQuery {
  from: string;
  to: string;
  from_amount?: string;
  to_amount?: string;
  slippage?: number;
  affiliate_fee?: number;
  indicative?: boolean;
}

/**
 * The price of a pair per solver that can fill it, best first, as `GET /v2/quote` and `GET /v3/estimate`
 * show it; `slippage` is echoed.
 */
export async function priceEntries(ctx: ApiContext, q: Omit<QuoteQuery, 'slippage'>, slippage: number) {
  const asset = (field: 'from' | 'to') => {
    const found = ctx.registry.asset(q[field]);
    if (!found || !found.isActive) throw invalid(`invalid query parameter '${field}': unknown or inactive asset ${shown(q[field])}`);
    return found;
  };
  const from = asset('from');
  const to = asset('to');
  if ((q.from_amount === undefined) === (q.to_amount === undefined)) {
    throw invalid("invalid query parameter 'from_amount': give exactly one of from_amount and to_amount");
  }
  const quotes = await ctx.quoter.quote({
    from,
    to,
    ...(q.from_amount !== undefined ? { fromAmount: BigInt(q.from_amount) } : { toAmount: BigInt(q.to_amount!) }),
    affiliateFeeBips: q.affiliate_fee ?? 0,
    ...(q.indicative ? { indicative: true } : {}),
  });
  return quotes.map((quote) => ({
    solver_id: quote.strategy.solverId,
    source: amountView(from, from.id, quote.sourceAmount.toString(), quote.sourcePrice),
    destination: amountView(to, to.id, quote.destinationAmount.toString(), quote.destinationPrice),
    fee: quote.strategy.feeBips,
    fixed_fee: quote.strategy.fixedFeeUsd,
    slippage,
    estimated_time: quote.strategy.estimatedTime,
  }));
}

export function quoteRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { auth } = ctx;

  app.get<{ Querystring: QuoteQuery }>(
    '/v2/quote',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Price a swap: one entry per solver that can fill it, best first',
        description:
          'Give exactly one of `from_amount` (what the client sends) and `to_amount` (what it wants to receive). ' +
          '`fee` is the solver fee in bips, `fixed_fee` a fixed USD fee, `estimated_time` seconds. ' +
          '`affiliate_fee` (total bips) comes out of the destination amount, as it will at order creation. ' +
          '`indicative=true`: a price to show, not to order at: the configured strategies alone, whatever liquidity is left, ' +
          'registered solvers not asked.',
        tags: ['quotes'],
        querystring: Type.Object(
          {
            from: Type.String({ description: 'Source asset id' }),
            to: Type.String({ description: 'Destination asset id' }),
            from_amount: Type.Optional(Amount),
            to_amount: Type.Optional(Amount),
            slippage: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SLIPPAGE_BIPS, description: 'Bips, echoed' })),
            affiliate_fee: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_AFFILIATE_FEE_BIPS, description: 'Total affiliate bips' })),
            indicative: Type.Optional(Type.Boolean({ default: false, description: 'A price to show, not to order at (default false)' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Ok(Type.Array(Type.Ref('PriceQuote'))), ...errorResponses(400, 401, 503) },
      },
    },
    async (request) => ({
      status: 'Ok',
      result: await priceEntries(ctx, request.query, request.query.slippage ?? request.app!.defaultSlippage),
    }),
  );
}
