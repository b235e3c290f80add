import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.ts';
import { orderView } from '../../orders/order-view.ts';
import { quoteView } from '../../orders/quote-view.ts';
import { findOrder } from '../../store/orders.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, HexId, Ok } from '../schemas.ts';

export function orderRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry, auth } = ctx;

  app.get<{ Params: { order: string } }>(
    '/v2/orders/:order',
    {
      preHandler: auth.preHandler,
      schema: {
        summary: 'Get an order',
        tags: ['orders'],
        params: Type.Object({ order: HexId }),
        response: { 200: Ok(Type.Ref('Order')), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const id = request.params.order.toLowerCase();
      const order = await findOrder(db, id);
      if (!order) throw notFound(`order ${id} not found`);
      return { status: 'Ok', result: orderView(order) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v3/quote/:id',
    {
      config: { bareErrors: true },
      schema: {
        summary: 'Get the firm quote of an order',
        description: 'Every order has one firm quote whose id is the order id. No API key is needed.',
        tags: ['quotes'],
        params: Type.Object({ id: HexId }),
        response: { 200: Ok(Type.Ref('Quote')), 400: Type.Ref('QuoteError'), 404: Type.Ref('QuoteError') },
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase();
      const order = await findOrder(db, id);
      if (!order) throw notFound(`quote ${id} not found`);
      return { status: 'Ok', result: quoteView(order, registry, Math.floor(Date.now() / 1000)) };
    },
  );
}
