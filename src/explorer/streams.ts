import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/context.ts';
import { errorResponses, HexId } from '../api/schemas.ts';
import { notFound } from '../errors.ts';

const ResumeQuery = Type.Object(
  {
    last_event_id: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,19}$', errorMessage: 'must be an event id (digits)', description: 'Resume after this event (as the Last-Event-ID header does)' }),
    ),
  },
  { additionalProperties: false },
);

const streamResponse = { description: 'Server-Sent Events', content: { 'text/event-stream': { schema: { type: 'string' } } } };

/**
 * The explorer's live updates: an order's event stream (its history, then each new event) and every
 * order's new events, served by the event hub as Server-Sent Events. Public, as the order read is.
 */
export function explorerStreamRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { orders, events } = ctx;

  app.get<{ Params: { order: string }; Querystring: Static<typeof ResumeQuery> }>(
    '/explorer/api/orders/:order/events',
    {
      schema: {
        summary: "Stream an order's events (explorer)",
        description: "The order's status changes as Server-Sent Events, as GET /v2/orders/{id}/events sends them: its history first (after Last-Event-ID when given), then each new one. No API key.",
        tags: ['explorer'],
        params: Type.Object({ order: HexId }),
        querystring: ResumeQuery,
        produces: ['text/event-stream'],
        response: { 200: streamResponse, ...errorResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const orderId = request.params.order.toLowerCase();
      if (!(await orders.get(orderId))) throw notFound(`order ${orderId} not found`);
      await events.serveStream(request, reply, { orderId });
    },
  );

  app.get<{ Querystring: Static<typeof ResumeQuery> }>(
    '/explorer/api/events',
    {
      schema: {
        summary: "Stream every order's events (explorer)",
        description: "Every order's new status changes as Server-Sent Events (after Last-Event-ID when given). No API key.",
        tags: ['explorer'],
        querystring: ResumeQuery,
        produces: ['text/event-stream'],
        response: { 200: streamResponse, ...errorResponses(400, 503) },
      },
    },
    async (request, reply) => events.serveStream(request, reply, { all: true }),
  );
}
