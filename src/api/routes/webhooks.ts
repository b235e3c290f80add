import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { conflict, notFound } from '../../errors.ts';
import { ORDER_STATUSES } from '../../orders/status.ts';
import { SERIAL_ID, toRfc3339Micro } from '../../store/database.ts';
import {
  deleteEndpoint,
  enableEndpoint,
  findDelivery,
  findEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../store/webhooks.ts';
import { MAX_ENDPOINTS_PER_APP, MAX_URL_LENGTH, registerEndpoint } from '../../webhooks/endpoints.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

const Timestamp = Type.String({ description: 'RFC 3339 UTC with microseconds' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

const endpointFields = {
  id: Type.String({ description: 'wh_ and 24 hex characters' }),
  url: Type.String(),
  statuses: Type.Array(Type.String(), { description: 'The order statuses delivered; empty: every status' }),
  created_at: Timestamp,
  disabled_at: Type.Union([Timestamp, Type.Null()], { description: 'Set when the endpoint was disabled for failing; null while active' }),
  disabled_reason: Type.String({ description: 'Why it was disabled ("" while active)' }),
  consecutive_failures: Type.Integer({ description: 'Failed attempts since the last success' }),
};
const EndpointView = Type.Object(endpointFields, { $id: 'WebhookEndpoint' });
const CreatedEndpoint = Type.Object(
  { ...endpointFields, secret: Type.String({ description: 'The signing secret (whsec_...): shown only in this answer' }) },
  { $id: 'CreatedWebhookEndpoint' },
);

const DeliveryView = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String({ description: 'The event id (also the Hashlock-Event-Id header): the same for every attempt' }),
    status: Type.String({ enum: ['pending', 'delivered', 'failed'] }),
    attempts: Type.Integer(),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due (pending only)' }),
    last_status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's HTTP status; null when no answer came" }),
    last_error: Type.String(),
    created_at: Timestamp,
    delivered_at: NullableTimestamp,
    attempt_log: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        started_at: Timestamp,
        duration_ms: Type.Integer(),
        status_code: Type.Union([Type.Integer(), Type.Null()]),
        error: Type.String(),
      }),
    ),
  },
  { $id: 'WebhookDelivery' },
);

const EndpointId = Type.Object({
  id: Type.String({ pattern: '^wh_[0-9a-f]{24}$', errorMessage: 'must be a webhook endpoint id (wh_ and 24 hex characters)' }),
});

const DeliveryId = Type.Object({
  ...EndpointId.properties,
  delivery: Type.String({ pattern: SERIAL_ID.source, errorMessage: 'must be a delivery id (digits)' }),
});

const CreateBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'An absolute http:// or https:// URL, without credentials' }),
  statuses: Type.Optional(
    Type.Array(Type.String({ enum: [...ORDER_STATUSES] }), {
      uniqueItems: true,
      maxItems: ORDER_STATUSES.length,
      description: 'The order statuses to deliver; absent or empty: every status',
    }),
  ),
});

const DeliveriesQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Deliveries per page' }),
});

const ts = (value: string | null): string | null => (value === null ? null : toRfc3339Micro(value));

function endpointView(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    statuses: e.statuses,
    created_at: toRfc3339Micro(e.createdAt),
    disabled_at: ts(e.disabledAt),
    disabled_reason: e.disabledReason,
    consecutive_failures: e.consecutiveFailures,
  };
}

function deliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    event_id: d.eventId,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: ts(d.nextAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: toRfc3339Micro(d.createdAt),
    delivered_at: ts(d.deliveredAt),
    attempt_log: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      started_at: toRfc3339Micro(a.startedAt),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error: a.error,
    })),
  };
}

const noSuchEndpoint = (id: string) => notFound(`no webhook endpoint ${id}`);

/** An app's webhook endpoints and their delivery logs (docs/api.md, "Webhooks"). Each app sees only its own. */
export function webhookRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, auth } = ctx;
  for (const schema of [EndpointView, CreatedEndpoint, DeliveryView]) app.addSchema(schema);
  const tags = ['webhooks'];

  app.post<{ Body: { url: string; statuses?: string[] } }>(
    '/v2/webhooks',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Register a webhook endpoint',
        description:
          `Order status changes of the calling app's orders are POSTed to \`url\`, signed with the returned \`secret\` ` +
          `(shown only here). At most ${MAX_ENDPOINTS_PER_APP} endpoints per app (409 beyond).`,
        tags,
        body: CreateBody,
        response: { 201: Ok(Type.Ref('CreatedWebhookEndpoint')), ...errorResponses(400, 401, 409) },
      },
    },
    async (request, reply) => {
      const { endpoint, secret } = await registerEndpoint(
        db,
        ctx.secrets,
        { appId: request.app!.id, url: request.body.url, statuses: request.body.statuses ?? [], allowPrivateAddresses: ctx.webhooksAllowPrivateAddresses },
        { url: "invalid body field 'url'", statuses: "invalid body field 'statuses'" },
      );
      return reply.code(201).send({ status: 'Ok', result: { ...endpointView(endpoint), secret } });
    },
  );

  app.get(
    '/v2/webhooks',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "The calling app's webhook endpoints",
        tags,
        response: { 200: Ok(Type.Array(Type.Ref('WebhookEndpoint'))), ...errorResponses(401) },
      },
    },
    async (request) => ({ status: 'Ok', result: (await listEndpoints(db, request.app!.id)).map(endpointView) }),
  );

  app.delete<{ Params: { id: string } }>(
    '/v2/webhooks/:id',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Remove a webhook endpoint and its delivery log',
        tags,
        params: EndpointId,
        response: { 200: Ok(Type.Object({ id: Type.String(), deleted: Type.Boolean() })), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      if (!(await deleteEndpoint(db, request.params.id, request.app!.id))) throw noSuchEndpoint(request.params.id);
      return { status: 'Ok', result: { id: request.params.id, deleted: true } };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v2/webhooks/:id/enable',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Enable a disabled webhook endpoint again',
        description: 'Clears its failure record. Deliveries stopped when it was disabled are not resent; new events are delivered.',
        tags,
        params: EndpointId,
        response: { 200: Ok(Type.Ref('WebhookEndpoint')), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const endpoint = await enableEndpoint(db, request.params.id, request.app!.id);
      if (!endpoint) throw noSuchEndpoint(request.params.id);
      return { status: 'Ok', result: endpointView(endpoint) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { page: number; per_page: number } }>(
    '/v2/webhooks/:id/deliveries',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "A webhook endpoint's delivery log, newest first",
        tags,
        params: EndpointId,
        querystring: DeliveriesQuery,
        response: {
          200: Ok(
            Type.Object({
              data: Type.Array(Type.Ref('WebhookDelivery')),
              page: Type.Integer(),
              per_page: Type.Integer(),
              total_items: Type.Integer(),
              total_pages: Type.Integer(),
            }),
          ),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await findEndpoint(db, id, request.app!.id))) throw noSuchEndpoint(id);
      const { page, per_page: perPage } = request.query;
      const { deliveries, total } = await listDeliveries(db, id, { page, perPage });
      return {
        status: 'Ok',
        result: { data: deliveries.map(deliveryView), page, per_page: perPage, total_items: total, total_pages: Math.ceil(total / perPage) },
      };
    },
  );

  app.post<{ Params: { id: string; delivery: string } }>(
    '/v2/webhooks/:id/deliveries/:delivery/redeliver',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Send a delivery again',
        description:
          'A delivered, given-up or stopped delivery is due again at once, with the same event id and body. It is retried like any delivery until 24 h after its event, so an older one gets one attempt. 409 while it is pending or its endpoint is disabled.',
        tags,
        params: DeliveryId,
        response: { 200: Ok(Type.Ref('WebhookDelivery')), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const { id, delivery } = request.params;
      if (!(await findEndpoint(db, id, request.app!.id))) throw noSuchEndpoint(id);
      const outcome = await redeliver(db, id, delivery);
      if (outcome === 'unknown') throw notFound(`no delivery ${delivery} of webhook endpoint ${id}`);
      if (outcome === 'pending') throw conflict(`delivery ${delivery} is still pending: it is retried on its own`);
      if (outcome === 'disabled') throw conflict(`webhook endpoint ${id} is disabled: enable it first (POST /v2/webhooks/${id}/enable)`);
      const read = await findDelivery(db, id, delivery);
      if (!read) throw notFound(`no delivery ${delivery} of webhook endpoint ${id}`);
      return { status: 'Ok', result: deliveryView(read) };
    },
  );
}
