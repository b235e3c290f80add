import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { partyMatchKeys, txHashMatchKeys } from '../../chains/adapters.ts';
import type { Registry } from '../../chains/registry.ts';
import { invalid, shown } from '../../errors.ts';
import { statusClock } from '../../orders/heights-cache.ts';
import { STATUS_FILTER_NAMES, statusFilterGroups, type StatusGroup } from '../../orders/status-groups.ts';
import { orderStatus } from '../../orders/status.ts';
import { listOrderIds, type OrderListQuery } from '../../store/order-list.ts';
import type { ApiContext } from '../context.ts';
import { orderJson } from '../../orders/order-json.ts';
import { errorResponses, Ok } from '../schemas.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

// Control characters never occur in these values, and a NUL is not even valid in a Postgres text.
const Filter = (description: string) =>
  Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[^\\x00-\\x1f\\x7f]+$',
      errorMessage: 'must be 1 to 200 characters, without control characters',
      description,
    }),
  );

/** The order list's filters, which the app's event stream takes too. */
export const ORDER_FILTERS = {
  address: Filter('Initiator, redeemer or delegate of either swap, compared as its chain compares addresses'),
  from_owner: Filter("The source swap's initiator, compared as its chain compares addresses"),
  to_owner: Filter("The destination swap's redeemer, compared as its chain compares addresses"),
  tx_hash: Filter('Any initiate, redeem or refund transaction hash of either swap, compared as its chain compares them'),
  from_chain: Filter('Source chain key'),
  to_chain: Filter('Destination chain key'),
  solver_id: Filter('The solver serving the order (exact)'),
  integrator: Filter("The integrator named in the order (the creating app's name, exact)"),
  status: Filter(`Comma-separated status groups: ${STATUS_FILTER_NAMES.join(', ')}`),
};

const ListQuery = Type.Object(
  {
    ...ORDER_FILTERS,
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
    per_page: Type.Integer({ minimum: 1, maximum: 500, default: 10, description: 'Orders per page' }),
  },
  { additionalProperties: false },
);

type ListQuery = Static<typeof ListQuery>;

function chainKey(registry: Registry, name: 'from_chain' | 'to_chain', key: string | undefined): string | undefined {
  if (key === undefined || registry.chain(key)) return key;
  const known = registry.chains.map((c) => c.key).join(', ');
  throw invalid(`invalid query parameter '${name}': unknown chain '${shown(key)}'; known chains: ${known}`);
}

function statusGroups(value: string | undefined): StatusGroup[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(',').map((g) => g.trim()).filter((g) => g !== '');
  const unknown = names.find((g) => statusFilterGroups(g) === undefined);
  if (unknown !== undefined || names.length === 0) {
    const what = unknown === undefined ? 'no status group given' : `unknown status group '${shown(unknown)}'`;
    throw invalid(`invalid query parameter 'status': ${what}; allowed: ${STATUS_FILTER_NAMES.join(', ')}`);
  }
  return [...new Set(names.flatMap((g) => statusFilterGroups(g)!))];
}

export type OrderFilterQuery = { [K in keyof typeof ORDER_FILTERS]?: string };

/** The filters of a query, checked and in the store's terms (every chain's keys for an address or hash). */
export function orderFilters(
  registry: Registry,
  q: OrderFilterQuery,
): Omit<OrderListQuery, 'appId' | 'nowUnix' | 'page' | 'perPage'> {
  const parties = (value: string | undefined) => (value === undefined ? undefined : partyMatchKeys(registry.chains, value));
  return {
    address: parties(q.address),
    fromOwner: parties(q.from_owner),
    toOwner: parties(q.to_owner),
    txHash: q.tx_hash === undefined ? undefined : txHashMatchKeys(registry.chains, q.tx_hash),
    fromChain: chainKey(registry, 'from_chain', q.from_chain),
    toChain: chainKey(registry, 'to_chain', q.to_chain),
    solverId: q.solver_id,
    integrator: q.integrator,
    statusGroups: statusGroups(q.status),
  };
}

export function orderListRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, clock, registry, auth, orders } = ctx;

  app.get<{ Querystring: ListQuery }>(
    '/v2/orders',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: "List the calling app's orders",
        description:
          'Orders created with the calling API key, newest first, each as the order read shows it. ' +
          'Filters combine with AND. Status groups: not-initiated (created), in-progress (initiate_detected, ' +
          'initiated, awaiting_redeem, awaiting_refund, redeem_detected, refund_detected), completed ' +
          '(redeemed, completed), expired, refunded; as Garden\'s clients send them, pending (not-initiated ' +
          'and in-progress), fulfilled (completed) and all.',
        tags: ['orders'],
        querystring: ListQuery,
        response: { 200: Ok(Type.Ref('PaginatedOrders')), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const now = await statusClock(db, clock);
      const { ids, total } = await listOrderIds(db, {
        ...orderFilters(registry, q),
        appId: request.app!.id,
        nowUnix: now.unixSeconds,
        page: q.page,
        perPage: q.per_page,
      });
      const records = await Promise.all(ids.map((id) => orders.get(id)));
      const data = records.flatMap((order) => (order ? [orderJson(order, orderStatus(order, now))] : []));
      const pages = Math.ceil(total / q.per_page);
      const meta = `"page":${q.page},"total_pages":${pages},"total_items":${total},"per_page":${q.per_page}`;
      return reply.type(JSON_TYPE).send(`{"status":"Ok","result":{"data":[${data.join(',')}],${meta}}}`);
    },
  );
}
