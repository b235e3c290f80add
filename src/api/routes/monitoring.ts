import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { partyMatchKeys } from '../../chains/adapters.ts';
import { invalid, shown } from '../../errors.ts';
import { statusClock } from '../../orders/heights-cache.ts';
import { ping } from '../../store/database.ts';
import { sourceTotals, type SourceTotals } from '../../store/order-list.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

const Chain = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 100, description }));
const Unix = (description: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description }));

const StatsQuery = Type.Object(
  {
    source_chain: Chain('Only orders from this chain (chain key)'),
    destination_chain: Chain('Only orders to this chain (chain key)'),
    address: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only orders this address is a party of' })),
    from: Unix('Only orders created at or after this unix second'),
    to: Unix('Only orders created at or before this unix second'),
  },
  { additionalProperties: false },
);

type StatsQuery = Static<typeof StatsQuery>;

/** Cents as dollars with two decimals. */
const dollars = (cents: bigint): string => `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;

/**
 * Garden's monitoring endpoints under /v2 and /v3: `health` in Garden's shape, and the `volume` and
 * `fees` of completed swaps (the client paid), in USD at the prices each order was made at.
 */
export function monitoringRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry, auth } = ctx;

  const totals = async (q: StatsQuery): Promise<SourceTotals[]> => {
    const chain = (name: 'source_chain' | 'destination_chain') => {
      const key = q[name];
      if (key === undefined || registry.chain(key)) return key;
      throw invalid(`invalid query parameter '${name}': unknown chain '${shown(key)}'`);
    };
    if (q.from !== undefined && q.to !== undefined && q.from > q.to) throw invalid("invalid query parameter 'to': must not be before 'from'");
    return sourceTotals(db, {
      fromChain: chain('source_chain'),
      toChain: chain('destination_chain'),
      address: q.address === undefined ? undefined : partyMatchKeys(registry.chains, q.address),
      createdFrom: q.from,
      createdTo: q.to,
      statusGroups: ['completed'],
      nowUnix: (await statusClock(db)).unixSeconds,
    });
  };
  const inCents = (units: bigint, asset: string) => units / 10n ** BigInt(registry.asset(asset)?.decimals ?? 0);

  for (const version of ['v2', 'v3'] as const) {
    app.get(
      `/${version}/health`,
      {
        schema: {
          summary: "Service health in Garden's shape (no API key)",
          description: '`Online` while the database answers; 503 `Server unavailable` when it does not. `/health` has the details.',
          tags: ['service'],
          response: {
            200: Ok(Type.String()),
            503: Type.Object({ status: Type.Literal('Error'), error: Type.String(), code: Type.String() }),
          },
        },
      },
      async (_request, reply: FastifyReply) => {
        try {
          await ping(db);
          return { status: 'Ok', result: 'Online' };
        } catch {
          return reply.code(503).send({ status: 'Error', error: 'Server unavailable', code: 'unavailable' });
        }
      },
    );

    app.get<{ Querystring: StatsQuery }>(
      `/${version}/volume`,
      {
        onRequest: auth.onRequest,
        schema: {
          summary: 'Swap volume in USD',
          description:
            'The USD value of the source amounts of completed swaps (the client paid), at the price each order was ' +
            'made at, as a decimal string with two decimals. Filters combine with AND.',
          tags: ['service'],
          querystring: StatsQuery,
          response: { 200: Ok(Type.String()), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const rows = await totals(request.query);
        return { status: 'Ok', result: dollars(rows.reduce((sum, r) => sum + inCents(r.valueCentsUnits, r.asset), 0n)) };
      },
    );

    app.get<{ Querystring: StatsQuery }>(
      `/${version}/fees`,
      {
        onRequest: auth.onRequest,
        schema: {
          summary: 'Swap fees in USD',
          description:
            "The solvers' fees of completed swaps: each order's fee bips of its source value plus its fixed fee, in USD " +
            'at the price the order was made at, as a decimal string with two decimals. Filters as for volume.',
          tags: ['service'],
          querystring: StatsQuery,
          response: { 200: Ok(Type.String()), ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const rows = await totals(request.query);
        return { status: 'Ok', result: dollars(rows.reduce((sum, r) => sum + inCents(r.feeCentsUnits, r.asset) + r.fixedFeeCents, 0n)) };
      },
    );
  }
}
