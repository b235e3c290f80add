import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { chainAdapter } from '../../chains/adapters.ts';
import { AppError, invalid, notFound } from '../../errors.ts';
import { statusClock } from '../../orders/heights-cache.ts';
import { orderStatus } from '../../orders/status.ts';
import { V3_ORDER_STATUSES, v3OrderJson } from '../../orders/v3-order-view.ts';
import { requestChainIndex } from '../../store/index-requests.ts';
import { listOrderIds } from '../../store/order-list.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, HexId, Ok } from '../schemas.ts';
import { markAggregatorRequest, markedAggregator } from '../errors.ts';
import { isAggregatorList, type AggregatorRoutes } from './aggregator.ts';
import { ORDER_FILTERS, orderFilters } from './order-list.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

const ListQuery = Type.Object(
  {
    ...ORDER_FILTERS,
    status: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: `Comma-separated: ${V3_ORDER_STATUSES.join(', ')}` }),
    ),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
    per_page: Type.Integer({ minimum: 1, maximum: 500, default: 10, description: 'Orders per page' }),
  },
  { additionalProperties: false },
);

const IndexRequest = Type.Object({
  id: HexId,
  tx_hash: Type.String({ minLength: 1, maxLength: 200, description: 'The transaction that funded the source' }),
});

/** v3's status filter values in the v2 list's spelling (`in_progress` is the group `in-progress`). */
function v2StatusFilter(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((s) => {
      const name = s.trim();
      if (!(V3_ORDER_STATUSES as readonly string[]).includes(name)) {
        throw invalid(`invalid query parameter 'status': unknown status '${name.slice(0, 100)}'; allowed: ${V3_ORDER_STATUSES.join(', ')}`);
      }
      return name.replace('_', '-');
    })
    .join(',');
}

/** Garden's v3 orders: the list and the read in v3's shapes, the report of an initiate, the instant-refund hashes. */
export function v3OrderRoutes(app: FastifyInstance, ctx: ApiContext, aggregator: AggregatorRoutes): void {
  const { db, registry, auth, orders } = ctx;

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/v3/orders',
    {
      onRequest: [(request, _reply, done) => (isAggregatorList(request.query) ? (markAggregatorRequest(request), done()) : done()), auth.onRequest],
      attachValidation: true,
      schema: {
        summary: "List the calling app's orders (v3)",
        description:
          'As `GET /v2/orders` (the same filters, newest first), each order in the v3 shape. `status` takes ' +
          'not_initiated, in_progress, completed, expired and refunded, comma-separated. Without any of the draft\'s ' +
          'parameters (page, per_page, status, the address and chain filters), or with `cursor` or `limit`, it is the ' +
          "Aggregator API's list instead (`tx_hash`, `cursor`, `limit` -> `AggregatorOrders`).",
        tags: ['orders'],
        querystring: ListQuery,
        response: { 200: Type.Union([Ok(Type.Ref('V3PaginatedOrders')), Type.Ref('AggregatorOrders')]), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      if (markedAggregator(request)) return aggregator.list(request, reply);
      if (request.validationError) throw request.validationError;
      const q = request.query;
      const now = await statusClock(db);
      const { ids, total } = await listOrderIds(db, {
        ...orderFilters(registry, { ...q, status: v2StatusFilter(q.status) }),
        appId: request.app!.id,
        nowUnix: now.unixSeconds,
        page: q.page,
        perPage: q.per_page,
      });
      const records = await Promise.all(ids.map((id) => orders.get(id)));
      const data = records.flatMap((order) => (order ? [v3OrderJson(order, orderStatus(order, now))] : []));
      const meta = `"page":${q.page},"total_pages":${Math.ceil(total / q.per_page)},"total_items":${total},"per_page":${q.per_page}`;
      return reply.type(JSON_TYPE).send(`{"status":"Ok","result":{"data":[${data.join(',')}],${meta}}}`);
    },
  );

  app.get<{ Params: { order: string } }>(
    '/v3/orders/:order',
    {
      onRequest: auth.onRequest,
      attachValidation: true,
      schema: {
        summary: 'Get an order (v3)',
        description:
          'From its creation by `POST /v3/quote` (`not_initiated`) to `completed`, `expired` or `refunded`. An id ' +
          "`ord_<order id>` is the Aggregator API's read (`AggregatorOrder`; `wait` holds it up to 25 s until the order changes).",
        tags: ['orders'],
        params: Type.Object({ order: HexId }),
        querystring: Type.Object({ wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 25, description: 'Aggregator API: seconds to hold the request while the order is unchanged' })) }),
        response: { 200: Type.Union([Ok(Type.Ref('V3Order')), Type.Ref('AggregatorOrder')]), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      if (request.params.order.startsWith('ord_')) return aggregator.read(request, reply, request.params.order);
      if (request.validationError) throw request.validationError;
      const id = request.params.order.toLowerCase();
      const order = await orders.get(id);
      if (!order) throw notFound(`order ${id} not found`);
      return reply.type(JSON_TYPE).send(`{"status":"Ok","result":${v3OrderJson(order, orderStatus(order, await statusClock(db)))}}`);
    },
  );

  app.post<{ Body: Static<typeof IndexRequest> }>(
    '/v3/index',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "Report the source's initiate transaction so that its chain is looked at now",
        description:
          "Optional: the source chain's watcher finds the initiate on its own within a block time. This wakes it at " +
          'once, on whichever instance runs it. 202 once asked; 400 when `tx_hash` is no transaction hash on the ' +
          'source chain; 404 for an unknown quote id.',
        tags: ['orders'],
        body: IndexRequest,
        response: { 202: Ok(Type.String({ description: 'The quote (order) id' })), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const id = request.body.id.toLowerCase();
      const order = await orders.get(id);
      if (!order) throw notFound(`quote ${id} not found`);
      const chain = registry.chain(order.source.chain);
      if (!chain || chainAdapter(chain)?.txHashMatchKey(request.body.tx_hash.trim()) === undefined) {
        throw invalid(`invalid body field 'tx_hash': not a transaction hash on ${order.source.chain}`);
      }
      await requestChainIndex(db, chain.key);
      return reply.code(202).send({ status: 'Ok', result: id });
    },
  );

  app.post<{ Body: { order_id: string } }>(
    '/v3/instant-refund-hash',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Hashes to sign for an instant refund (v3)',
        description:
          'As `GET /v2/orders/{order}/instant-refund-hash`: Bitcoin family, one hash per unspent output of the source ' +
          'HTLC; EVM, the EIP-712 digest of Refund(orderId). Send the signatures with `PATCH /v3/orders/{order}?action=instant-refund`.',
        tags: ['orders'],
        body: Type.Object({ order_id: HexId }),
        response: {
          200: Ok(Type.Union([Type.Array(Type.String()), Type.String()])),
          ...errorResponses(400, 401, 404, 409, 503),
        },
      },
    },
    async (request) => {
      if (!ctx.orderActions) throw new AppError('unavailable', 'order actions are not available: no relayer is configured');
      return { status: 'Ok', result: await ctx.orderActions.instantRefundHashes(request.body.order_id.toLowerCase()) };
    },
  );
}
