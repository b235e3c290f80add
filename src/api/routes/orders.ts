import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { chainAdapter } from '../../chains/adapters.ts';
import { unixSeconds } from '../../clock.ts';
import { notFound } from '../../errors.ts';
import { freshStatusClock, statusClock } from '../../orders/heights-cache.ts';
import type { StatusClock } from '../../orders/status.ts';
import { quoteInitiate, quoteStatus, quoteView, type QuoteStatus } from '../../orders/quote-view.ts';
import type { OrderRecord } from '../../store/orders.ts';
import type { ApiContext } from '../context.ts';
import { memoOrderStatus, orderResponseJson } from '../../orders/order-json.ts';
import { swapView } from '../../orders/order-view.ts';
import { errorResponses, HexId, Ok } from '../schemas.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Serialized quote bodies per order record. Cached records are immutable (a change brings a new
 * record), so a record's body is built once per time-dependent status.
 */
const quoteBodies = new WeakMap<OrderRecord, { status: QuoteStatus; body: string }>();

export function orderRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, clock, registry, auth, orders } = ctx;

  app.get<{ Params: { order: string } }>(
    '/v2/orders/:order',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Get an order',
        tags: ['orders'],
        params: Type.Object({ order: HexId }),
        response: { 200: Ok(Type.Ref('Order')), ...errorResponses(400, 401, 404) },
      },
    },
    (request, reply) => {
      const id = request.params.order.toLowerCase();
      const send = (order: OrderRecord, now: StatusClock) => reply.type(JSON_TYPE).send(orderResponseJson(order, memoOrderStatus(order, now)));
      // The polled read: from the caches in the same tick when they hold it.
      const cached = orders.peek(id);
      const now = cached && freshStatusClock(db, clock);
      if (cached && now) return send(cached, now);
      return (async () => {
        const order = await orders.get(id);
        if (!order) throw notFound(`order ${id} not found`);
        return send(order, await statusClock(db, clock));
      })();
    },
  );

  app.get<{ Params: { order: string } }>(
    '/v2/orders/:order/swaps',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "Get an order's two swaps",
        description: 'The source and destination swaps exactly as the order read shows them.',
        tags: ['orders'],
        params: Type.Object({ order: HexId }),
        response: {
          200: Ok(Type.Object({ source_swap: Type.Ref('Swap'), destination_swap: Type.Ref('Swap') })),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const id = request.params.order.toLowerCase();
      const order = await orders.get(id);
      if (!order) throw notFound(`order ${id} not found`);
      return { status: 'Ok', result: { source_swap: swapView(order.source), destination_swap: swapView(order.destination) } };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v3/quote/:id',
    {
      schema: {
        summary: 'Get the firm quote of an order',
        description: 'Every order has one firm quote whose id is the order id. No API key is needed.',
        tags: ['quotes'],
        params: Type.Object({ id: HexId }),
        response: { 200: Ok(Type.Ref('Quote')), 400: Type.Ref('QuoteError'), 404: Type.Ref('QuoteError') },
      },
    },
    async (request, reply) => {
      const id = request.params.id.toLowerCase();
      const order = await orders.get(id);
      if (!order) throw notFound(`quote ${id} not found`);
      const now = unixSeconds(clock);
      const status = quoteStatus(order, now);
      // A Solana initiate carries a recent blockhash, so its body is built afresh every time.
      const source = registry.asset(order.source.asset)?.chain;
      const reusable = !(source && chainAdapter(source)?.initiateExpires);
      let cached = reusable ? quoteBodies.get(order) : undefined;
      if (cached?.status !== status) {
        const initiate = await quoteInitiate(order, registry, ctx.signingOptions);
        cached = { status, body: JSON.stringify({ status: 'Ok', result: quoteView(order, registry, now, initiate) }) };
        if (reusable) quoteBodies.set(order, cached);
      }
      return reply.type(JSON_TYPE).send(cached.body);
    },
  );
}
