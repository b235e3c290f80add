import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { unixSeconds } from '../../clock.ts';
import { familyHtlc } from '../../chains/adapters.ts';
import type { Asset } from '../../chains/registry.ts';
import { conflict, invalid, shown } from '../../errors.ts';
import { quoteInitiate, quoteView } from '../../orders/quote-view.ts';
import { findOrderByNonce, type OrderRecord } from '../../store/orders.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';
import { V3EstimateQuery, V3QuoteRequest } from '../v3-schemas.ts';
import { markAggregatorRequest, markedAggregator } from '../errors.ts';
import { isAggregatorEstimate, isAggregatorQuote, type AggregatorRoutes } from './aggregator.ts';
import { priceEntries } from './quotes.ts';

type Body = Static<typeof V3QuoteRequest>;
type LegName = 'source' | 'destination';

const present = (value: string | null | undefined): value is string => value !== undefined && value !== null && value !== '';

/**
 * Garden's v3 order flow: `POST /v3/quote` prices the swap and creates the order in one call (through
 * the same OrderCreator as `POST /v2/orders`, so every creation rule holds), and `GET /v3/estimate`
 * prices without creating anything.
 */
export function v3QuoteRoutes(app: FastifyInstance, ctx: ApiContext, aggregator: AggregatorRoutes): void {
  const { auth, registry, quoter, orders } = ctx;

  const asset = (leg: LegName, id: string): Asset => {
    const found = registry.asset(id);
    if (!found || !found.isActive) throw invalid(`invalid body field '${leg}.asset': unknown or inactive asset ${shown(id)}`);
    return found;
  };

  /** A leg's owner, or the other leg's where it is an address on this leg's chain too. */
  const owner = (body: Body, leg: LegName, assetOfLeg: Asset): string => {
    const own = body[leg].owner;
    if (present(own)) return own;
    const other = body[leg === 'source' ? 'destination' : 'source'].owner;
    if (!present(other)) throw invalid(`invalid body field '${leg}.owner': give the owner on at least one leg`);
    if (familyHtlc(assetOfLeg.chain)?.normalizeAddress(assetOfLeg.chain, other.trim()) === undefined) {
      throw invalid(`invalid body field '${leg}.owner': is required (the other leg's owner is no address on ${assetOfLeg.chain.key})`);
    }
    return other;
  };

  /** The quote of an order, as POST /v3/quote returns it: the stored quote without its status. */
  const postedQuote = async (order: OrderRecord) => {
    const initiate = await quoteInitiate(order, registry, ctx.signingOptions);
    const { status: _status, ...view } = quoteView(order, registry, unixSeconds(ctx.clock), initiate);
    return { status: 'Ok', result: { request_id: randomUUID(), quotes: [view] } };
  };

  app.post<{ Body: Body }>(
    '/v3/quote',
    {
      // The Aggregator's requests carry an Idempotency-Key: a 401 before the body is read takes its shape.
      onRequest: [(request, _reply, done) => (request.headers['idempotency-key'] !== undefined ? (markAggregatorRequest(request), done()) : done()), auth.onRequest],
      // The body decides whose request it is (the Aggregator's fields, or the draft's legs): checked in the handler.
      attachValidation: true,
      schema: {
        summary: 'Price a swap and create its order in one call',
        description:
          'Set `amount` on exactly one leg: on `source` to spend that much, on `destination` to receive it; the other ' +
          'is priced by the best solver. The order is created as `POST /v2/orders` creates it (limits, route policy, ' +
          'liquidity reservation, slippage, affiliate fees, idempotency by `nonce`) and the one quote returned is it: ' +
          '`id` is the order id, `initiate` what the client sends to fund the source (its family\'s shape). The same ' +
          'app and nonce return the same order again, whatever prices did since (409 for different terms). Failures ' +
          'are `{"error":"..."}`. A body with the Aggregator API\'s fields (`sell_asset`, `buy_asset`, `amount`, ' +
          '`trade_type`, `sell_address`, `buy_address`) and an `Idempotency-Key` header is the Aggregator\'s quote instead ' +
          '(`AggregatorQuoteRequest` -> `AggregatorQuotes`, errors `AggregatorError`; docs/api.md, "The Aggregator API").',
        tags: ['quotes'],
        body: V3QuoteRequest,
        response: {
          200: Type.Union([Ok(Type.Ref('V3PostQuoteResponse')), Type.Ref('AggregatorQuotes')]),
          400: Type.Union([Type.Ref('QuoteError'), Type.Ref('AggregatorError')]),
          401: Type.Union([Type.Ref('QuoteError'), Type.Ref('AggregatorError')]),
          409: Type.Union([Type.Ref('QuoteError'), Type.Ref('AggregatorError')]),
          503: Type.Union([Type.Ref('QuoteError'), Type.Ref('AggregatorError')]),
        },
      },
    },
    async (request, reply) => {
      if (isAggregatorQuote(request.body)) return aggregator.quote(request, reply);
      if (request.validationError) throw request.validationError;
      const body = request.body;
      const app = request.app!;
      if (present(body.source.amount) === present(body.destination.amount)) {
        throw invalid("invalid body field 'source.amount': set amount on exactly one of source and destination");
      }
      const from = asset('source', body.source.asset);
      const to = asset('destination', body.destination.asset);
      const sourceOwner = owner(body, 'source', from);
      const destinationOwner = owner(body, 'destination', to);
      const fixed: LegName = present(body.source.amount) ? 'source' : 'destination';

      // A nonce already used: its order again when the request asks the same, whatever prices did since.
      if (present(body.nonce)) {
        const existing = await findOrderByNonce(ctx.db, app.id, body.nonce);
        if (existing) {
          const swap = fixed === 'source' ? existing.source : existing.destination;
          const same =
            existing.source.asset === from.id && existing.destination.asset === to.id && swap.amount === body[fixed].amount;
          if (!same) throw conflict('nonce: already used by this app for a different order');
          return postedQuote((await orders.get(existing.id)) ?? existing);
        }
      }

      const affiliateBips = (body.affiliate_fees ?? []).reduce((sum, f) => sum + f.fee, 0);
      const [best] = await quoter.quote({
        from,
        to,
        ...(fixed === 'source' ? { fromAmount: BigInt(body.source.amount!) } : { toAmount: BigInt(body.destination.amount!) }),
        affiliateFeeBips: affiliateBips,
      });
      const leg = (name: LegName, ownerAddress: string, amount: bigint) => ({
        asset: body[name].asset,
        owner: ownerAddress,
        amount: amount.toString(),
        ...(present(body[name].delegate) ? { delegate: body[name].delegate } : {}),
      });
      const { result } = await ctx.orderCreator.create(
        app,
        {
          source: leg('source', sourceOwner, best!.sourceAmount),
          destination: leg('destination', destinationOwner, best!.destinationAmount),
          slippage: body.slippage,
          ...(present(body.nonce) ? { nonce: body.nonce } : {}),
          ...(body.affiliate_fees ? { affiliate_fees: body.affiliate_fees } : {}),
        },
        'v3',
      );
      const order = await orders.get(result.order_id as string);
      if (!order) throw new Error(`order ${String(result.order_id)} was created but cannot be read`);
      return postedQuote(order);
    },
  );

  app.get<{ Querystring: Static<typeof V3EstimateQuery> }>(
    '/v3/estimate',
    {
      // The Aggregator's estimate (its query parameters) takes a key optionally; the draft's requires one.
      onRequest: (request, reply, done) => (isAggregatorEstimate(request.query) ? (markAggregatorRequest(request), done()) : auth.onRequest(request, reply, done)),
      attachValidation: true,
      schema: {
        summary: 'Price a route without creating an order',
        description:
          'Give exactly one of `from_amount` and `to_amount`. One entry per solver that can fill it, best first; ' +
          "`slippage` is the app's default. With `sell_asset`, `buy_asset`, `amount` and `trade_type` instead, the " +
          "Aggregator API's estimate (`AggregatorEstimates`; the key optional).",
        tags: ['quotes'],
        security: [{ appId: [] }, { gardenAppId: [] }],
        querystring: V3EstimateQuery,
        response: { 200: Type.Union([Ok(Type.Array(Type.Ref('V3EstimateItem'))), Type.Ref('AggregatorEstimates')]), ...errorResponses(400, 401, 503) },
      },
    },
    async (request, reply) => {
      if (markedAggregator(request)) return aggregator.estimate(request, reply);
      if (request.validationError) throw request.validationError;
      return { status: 'Ok', result: await priceEntries(ctx, request.query, request.app!.defaultSlippage) };
    },
  );
}
