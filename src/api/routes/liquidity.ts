import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { toDisplay, toUsd } from '../../pricing/amounts.ts';
import { listLiquidity } from '../../store/solvers.ts';
import type { SolverRecord } from '../../store/solver-records.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

export function liquidityRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry, prices, auth, standing } = ctx;

  // Garden serves it under both versions, in one shape.
  for (const version of ['v2', 'v3'] as const) app.get(
    `/${version}/liquidity`,
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Available liquidity per solver',
        description:
          '`balance` is the solver balance last read on chain; `virtual_balance` is that balance minus what ' +
          'open orders have reserved and the solver has not funded yet: what new orders can use. `record` is ' +
          "the solver's record over its last 30 days of orders, and whether it is suspended from quoting.",
        tags: ['liquidity'],
        response: { 200: Ok(Type.Array(Type.Ref('Liquidity'))), ...errorResponses(401) },
      },
    },
    async () => {
      const [rows, records] = await Promise.all([listLiquidity(db), standing.records()]);
      const recordOf = new Map(records.map((r) => [r.solverId, r]));
      const bySolver = new Map<string, Array<Record<string, string>>>();
      for (const row of rows) {
        const asset = registry.asset(row.asset);
        if (!asset) continue;
        const available = row.balance > row.committed ? row.balance - row.committed : 0n;
        const entries = bySolver.get(row.solverId) ?? [];
        entries.push({
          asset: row.asset,
          address: row.address,
          balance: row.balance.toString(),
          virtual_balance: available.toString(),
          readable_balance: toDisplay(row.balance, asset.decimals),
          fiat_value: toUsd(row.balance, asset.decimals, prices.usdPrice(asset.priceId) ?? 0),
        });
        bySolver.set(row.solverId, entries);
      }
      return {
        status: 'Ok',
        result: [...bySolver].map(([solver_id, liquidity]) => {
          const r = recordOf.get(solver_id);
          return { solver_id, liquidity, ...(r ? { record: recordView(r) } : {}) };
        }),
      };
    },
  );
}

const recordView = (r: SolverRecord) => ({
  matched: r.matched,
  filled: r.filled,
  filled_late: r.filledLate,
  unfilled: r.unfilled,
  median_seconds_to_fund: r.medianSecondsToFund,
  suspended: r.suspended,
  suspended_reason: r.suspendedReason,
});
