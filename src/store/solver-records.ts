import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Each solver's record over its recent orders, and its standing. An order is the solver's to fund once
 * its source is initiated (confirmed, with the confirmations the order requires) before the order's
 * deadline and the solver has not co-signed an instant refund of it (then rule 5 forbids funding). It
 * falls due `fundWithinSeconds` after the source's confirmations could have arrived (its initiate
 * block's time plus the chain's confirmation target in blocks): funded later is late; not funded by
 * then is unfilled, and suspends the solver from quoting (`suspendOverdueSolvers`) until the operator
 * restores it.
 */
export interface SolverRecord {
  solverId: string;
  /** Orders matched to the solver in the window. */
  matched: number;
  /** Orders whose destination it funded. */
  filled: number;
  filledLate: number;
  /** Orders it had to fund and has not, past their due time. */
  unfilled: number;
  /** Median seconds from the source's initiate block to the destination's, over the filled orders; null with none. */
  medianSecondsToFund: number | null;
  suspended: boolean;
  suspendedReason: string | null;
}

/** How far back the records look. */
export const RECORD_WINDOW_DAYS = 30;

/**
 * Per order of the window: whether it is the solver's to fund, funded, its seconds to fund, the seconds
 * it was allowed, and when it fell due (unix seconds).
 */
const recentOrders = (fundWithinSeconds: number, nowUnix: number) => sql`
  select o.id, o.solver_id,
    s.initiate_tx_hash <> '' and s.initiate_block_number <> 0 and s.current_confirmations >= s.required_confirmations
      and s.initiate_timestamp is not null and s.initiate_timestamp <= to_timestamp(o.deadline)
      and not o.instant_refund_signed as to_fund,
    d.initiate_tx_hash <> '' as funded,
    extract(epoch from d.initiate_timestamp - s.initiate_timestamp)::float8 as seconds_to_fund,
    c.confirmation_target * c.block_time_ms / 1000.0 + ${fundWithinSeconds}::float8 as allowed_seconds,
    extract(epoch from s.initiate_timestamp)::float8 + c.confirmation_target * c.block_time_ms / 1000.0 + ${fundWithinSeconds}::float8 as due_at
  from orders o
  join swaps s on s.order_id = o.id and s.side = 'source'
  join swaps d on d.order_id = o.id and d.side = 'destination'
  join chains c on c.key = s.chain
  where o.created_at > to_timestamp(${nowUnix}::float8) - make_interval(days => ${RECORD_WINDOW_DAYS})
`;

export async function solverRecords(db: Db, input: { nowUnix: number; fundWithinSeconds: number }): Promise<SolverRecord[]> {
  const { rows } = await sql<{
    solver_id: string;
    matched: number;
    filled: number;
    filled_late: number;
    unfilled: number;
    median: number | null;
    suspended_at: string | null;
    suspended_reason: string | null;
  }>`
    with r as (${recentOrders(input.fundWithinSeconds, input.nowUnix)})
    select sv.id as solver_id,
      count(r.id)::int as matched,
      count(r.id) filter (where r.funded)::int as filled,
      count(r.id) filter (where r.funded and r.seconds_to_fund > r.allowed_seconds)::int as filled_late,
      count(r.id) filter (where r.to_fund and not r.funded and r.due_at < ${input.nowUnix}::float8)::int as unfilled,
      percentile_cont(0.5) within group (order by r.seconds_to_fund) filter (where r.funded and r.seconds_to_fund is not null) as median,
      sv.suspended_at, sv.suspended_reason
    from solvers sv
    left join r on r.solver_id = sv.id
    where sv.is_active or sv.suspended_at is not null
    group by sv.id, sv.suspended_at, sv.suspended_reason
    order by sv.id
  `.execute(db);
  return rows.map((r) => ({
    solverId: r.solver_id,
    matched: r.matched,
    filled: r.filled,
    filledLate: r.filled_late,
    unfilled: r.unfilled,
    medianSecondsToFund: r.median === null ? null : Number(r.median),
    suspended: r.suspended_at !== null,
    suspendedReason: r.suspended_reason,
  }));
}

/**
 * Suspends every active solver, not suspended yet, with an order it had to fund and has not past its due
 * time, one that fell due after the operator last restored it. Returns the solvers suspended now.
 */
export async function suspendOverdueSolvers(db: Db, input: { nowUnix: number; fundWithinSeconds: number }): Promise<Array<{ solverId: string; orderId: string }>> {
  const { rows } = await sql<{ solver_id: string; order_id: string }>`
    with r as (${recentOrders(input.fundWithinSeconds, input.nowUnix)}),
    overdue as (
      select distinct on (r.solver_id) r.solver_id, r.id as order_id
      from r join solvers sv on sv.id = r.solver_id
      where r.to_fund and not r.funded and r.due_at < ${input.nowUnix}::float8
        and sv.is_active and sv.suspended_at is null
        and (sv.restored_at is null or r.due_at > extract(epoch from sv.restored_at)::float8)
      order by r.solver_id, r.due_at
    )
    update solvers sv set suspended_at = now(), suspended_reason = 'left the confirmed source of order ' || o.order_id || ' unfunded past its due time'
    from overdue o where sv.id = o.solver_id and sv.suspended_at is null
    returning sv.id as solver_id, o.order_id
  `.execute(db);
  return rows.map((r) => ({ solverId: r.solver_id, orderId: r.order_id }));
}

/** The operator's suspension (`reason`) or restore (`null`) of a solver; false when there is no such solver. */
export async function setSolverSuspended(db: Db, solverId: string, reason: string | null): Promise<boolean> {
  const result = await db
    .updateTable('solvers')
    .set(reason === null ? { suspended_at: null, suspended_reason: null, restored_at: sql<Date>`now()` } : { suspended_at: sql<Date>`now()`, suspended_reason: reason })
    .where('id', '=', solverId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The solvers suspended from quoting now. */
export async function suspendedSolvers(db: Db): Promise<Map<string, string>> {
  const rows = await db.selectFrom('solvers').select(['id', 'suspended_reason']).where('suspended_at', 'is not', null).execute();
  return new Map(rows.map((r) => [r.id, r.suspended_reason ?? 'suspended by the operator']));
}
