import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/context.ts';
import { errorResponses, HexId, Ok } from '../api/schemas.ts';
import { invalid, notFound } from '../errors.ts';
import { statusClock } from '../orders/heights-cache.ts';
import { orderJson } from '../orders/order-json.ts';
import type { OrderRecord } from '../store/orders.ts';
import { orderStatus, type StatusClock } from '../orders/status.ts';
import { orderEventsOf } from '../store/order-events.ts';
import { searchOrders } from './search.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

const SearchQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        // No control characters: they occur in no id, address or hash (and a NUL in no Postgres text).
        pattern: '^[^\\x00-\\x1f\\x7f]+$',
        errorMessage: 'must be 1 to 200 characters, without control characters',
        description: 'An order id, an address (a party of either swap) or a transaction hash; none: the most recent orders',
      }),
    ),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
    per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Orders per page' }),
  },
  { additionalProperties: false },
);
type SearchQuery = Static<typeof SearchQuery>;

const OrderParams = Type.Object({ order: HexId });

const ExplorerRegistry = Type.Object({
  chains: Type.Array(
    Type.Object({ chain: Type.String(), name: Type.String(), family: Type.String(), explorer_url: Type.String(), confirmation_target: Type.Integer() }),
  ),
  assets: Type.Array(
    Type.Object({ id: Type.String(), chain: Type.String(), symbol: Type.String(), name: Type.String(), decimals: Type.Integer() }),
  ),
});

const TimelineEntry = Type.Object({ id: Type.String(), status: Type.String(), created_at: Type.String() });

const SearchResult = Type.Object({
  match: Type.Union([Type.Literal('recent'), Type.Literal('order'), Type.Literal('tx_hash'), Type.Literal('address'), Type.Literal('none')], {
    description: 'What the search matched: recent (no q), order (its id), tx_hash, address, or none',
  }),
  data: Type.Array(Type.Ref('Order')),
  page: Type.Integer(),
  total_pages: Type.Integer(),
  total_items: Type.Integer(),
  per_page: Type.Integer(),
});

/** The chains and assets as the explorer shows them: names, explorer links, symbols and decimals. */
function registryBody(registry: ApiContext['registry']): string {
  const chains = registry.chains.map((c) => ({
    chain: c.key,
    name: c.name,
    family: c.family,
    explorer_url: c.explorerUrl,
    confirmation_target: c.confirmationTarget,
  }));
  const assets = registry.chains.flatMap((c) =>
    c.assets.map((a) => ({ id: a.id, chain: c.key, symbol: a.symbol, name: a.name, decimals: a.decimals })),
  );
  return JSON.stringify({ status: 'Ok', result: { chains, assets } });
}

/**
 * The explorer's public JSON: the order read of every app's orders (no API key, the same public
 * data `GET /v2/orders/{id}` shows), a search across them, an order's recorded status changes, and
 * the registry's display data.
 */
export function explorerApiRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, clock, registry, orders } = ctx;
  const registryJson = registryBody(registry);
  const shownOrder = (order: OrderRecord, now: StatusClock) => orderJson(order, orderStatus(order, now));

  app.get(
    '/explorer/api/registry',
    {
      schema: {
        summary: 'Chains and assets for the explorer',
        description: "Every chain's name, family, explorer_url and confirmation target; every asset's symbol and decimals. No API key.",
        tags: ['explorer'],
        response: { 200: Ok(ExplorerRegistry) },
      },
    },
    async (_request, reply) => reply.type(JSON_TYPE).send(registryJson),
  );

  app.get<{ Querystring: SearchQuery }>(
    '/explorer/api/orders',
    {
      schema: {
        summary: 'Recent orders, or a search across every app',
        description:
          'Without q, every app\'s orders, newest first. With q: the order of that id, else the orders with that transaction ' +
          'hash, else the orders with that address as a party of either swap, compared as each chain compares them. No API key.',
        tags: ['explorer'],
        querystring: SearchQuery,
        response: { 200: Ok(SearchResult), ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      const { page, per_page: perPage } = request.query;
      const q = request.query.q?.trim();
      if (q === '') throw invalid("invalid query parameter 'q': must not be blank");
      const now = await statusClock(db, clock);
      const found = await searchOrders(ctx, q, { page, perPage, nowUnix: now.unixSeconds });
      const records = await Promise.all(found.ids.map((id) => orders.get(id)));
      const data = records.flatMap((order) => (order ? [shownOrder(order, now)] : []));
      const meta = `"page":${page},"total_pages":${Math.ceil(found.total / perPage)},"total_items":${found.total},"per_page":${perPage}`;
      return reply.type(JSON_TYPE).send(`{"status":"Ok","result":{"match":"${found.match}","data":[${data.join(',')}],${meta}}}`);
    },
  );

  app.get<{ Params: Static<typeof OrderParams> }>(
    '/explorer/api/orders/:order',
    {
      schema: {
        summary: 'An order and its status timeline',
        description: 'The order as GET /v2/orders/{id} shows it, and its recorded status changes, oldest first. No API key.',
        tags: ['explorer'],
        params: OrderParams,
        response: { 200: Ok(Type.Object({ order: Type.Ref('Order'), events: Type.Array(TimelineEntry) })), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const id = request.params.order.toLowerCase();
      const [order, events] = await Promise.all([orders.get(id), orderEventsOf(db, id)]);
      if (!order) throw notFound(`order ${id} not found`);
      const body = `{"status":"Ok","result":{"order":${shownOrder(order, await statusClock(db, clock))},"events":${JSON.stringify(events)}}}`;
      return reply.type(JSON_TYPE).send(body);
    },
  );
}
