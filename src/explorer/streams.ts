import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/context.ts';
import { errorResponses, HexId } from '../api/schemas.ts';
import { EVENT_STREAM_RESPONSE, RESUME_QUERY, serveOrderStream } from '../api/routes/events.ts';

const ResumeQuery = Type.Object(RESUME_QUERY, { additionalProperties: false });

/**
 * The explorer's live updates: an order's event stream (its history, then each new event) and every
 * order's new events, served by the event hub as Server-Sent Events. Public, as the order read is.
 */
export function explorerStreamRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { events } = ctx;

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
        response: { 200: EVENT_STREAM_RESPONSE, ...errorResponses(400, 404, 429, 503) },
      },
    },
    async (request, reply) => serveOrderStream(ctx, request, reply, { public: true }),
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
        response: { 200: EVENT_STREAM_RESPONSE, ...errorResponses(400, 429, 503) },
      },
    },
    async (request, reply) => events.serveStream(request, reply, { all: true }, { public: true }),
  );
}
