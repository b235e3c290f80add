import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../errors.ts';
import type { OrderEvent } from '../../events/order-event.ts';
import type { StreamAccess } from '../../events/event-hub.ts';
import { StreamFilters } from '../../events/stream-filters.ts';
import { statusGroup } from '../../orders/status-groups.ts';
import { SERIAL_ID } from '../../store/database.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, HexId } from '../schemas.ts';
import { ORDER_FILTERS, orderFilters, type OrderFilterQuery } from './order-list.ts';

/** The query parameter that resumes a stream, for clients that cannot send the Last-Event-ID header. */
export const RESUME_QUERY = {
  last_event_id: Type.Optional(
    Type.String({
      pattern: SERIAL_ID.source,
      errorMessage: 'must be an event id (digits)',
      description: 'Resume after this event, as the Last-Event-ID header does',
    }),
  ),
};

const STREAM_DESCRIPTION =
  'Server-Sent Events (text/event-stream). Each event is one change of an order\'s status: `id` is the event id and ' +
  '`data` is `{"id","type":"order.status","order_id","status","created_at","order"}`, the order as `GET /v2/orders/{id}` ' +
  'showed it then. Send `Last-Event-ID` (or `last_event_id`) to resume after an event; nothing recorded since is ' +
  'missed. A comment line (`: heartbeat`) is sent every 15 s while the stream is idle.';

export const EVENT_STREAM_RESPONSE = { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } };

/** Streams the events of the order named by the path (its history, then live); an unknown order is 404 before any stream. */
export async function serveOrderStream(
  ctx: ApiContext,
  request: FastifyRequest<{ Params: { order: string } }>,
  reply: FastifyReply,
  access: StreamAccess = {},
): Promise<void> {
  const orderId = request.params.order.toLowerCase();
  if (!(await ctx.orders.get(orderId))) throw notFound(`order ${orderId} not found`);
  await ctx.events.serveStream(request, reply, { orderId }, access);
}

export function eventRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry, auth, events } = ctx;
  const filters = new StreamFilters(db);

  app.get<{ Params: { order: string } }>(
    '/v2/orders/:order/events',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "Stream an order's events",
        description: `${STREAM_DESCRIPTION} The stream starts with the order's history (after Last-Event-ID when given).`,
        tags: ['events'],
        params: Type.Object({ order: HexId }),
        querystring: Type.Object(RESUME_QUERY, { additionalProperties: false }),
        produces: ['text/event-stream'],
        response: { 200: EVENT_STREAM_RESPONSE, ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request, reply) => serveOrderStream(ctx, request, reply),
  );

  app.get<{ Querystring: OrderFilterQuery & { last_event_id?: string } }>(
    '/v2/events',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "Stream the events of the calling app's orders",
        description: `${STREAM_DESCRIPTION} New events only, or those after Last-Event-ID; the filters are the order list's.`,
        tags: ['events'],
        querystring: Type.Object({ ...ORDER_FILTERS, ...RESUME_QUERY }, { additionalProperties: false }),
        produces: ['text/event-stream'],
        response: { 200: EVENT_STREAM_RESPONSE, ...errorResponses(400, 401, 503) },
      },
    },
    async (request, reply) => {
      const appId = request.app!.id;
      const { statusGroups, ...rest } = orderFilters(registry, request.query);
      const queried = Object.values(rest).some((v) => v !== undefined);
      // The status filter is the event's status; the others are the order list's, asked of the event's
      // order together with every other stream's (StreamFilters).
      const matches = filters.matcher({ ...rest, appId });
      const accept = async (event: OrderEvent): Promise<boolean> => {
        if (statusGroups && !statusGroups.includes(statusGroup(event.status))) return false;
        return !queried || matches(event.orderId);
      };
      await events.serveStream(request, reply, statusGroups || queried ? { appId, accept } : { appId });
    },
  );
}
