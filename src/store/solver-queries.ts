import { sql, type RawBuilder } from 'kysely';
import {
  all,
  any,
  confirmed,
  deadlinePassed,
  hasConfirmations,
  not,
  seen,
  statusRule,
  timelockRunOut,
  type Condition,
  type Side,
} from '../orders/status.ts';
import type { Db } from './database.ts';
import { findOrdersOf, type OrderRecord } from './orders.ts';
import { conditionSql } from './status-sql.ts';

/**
 * The solver's queries: which of its orders need a step, and the rule-5 funding claim. Each query
 * selects by the swap fields the watchers keep, so an order drops out once its step shows on chain.
 */

export interface SolverQuery {
  /** The solver whose own steps (SOLVER_OWN_STEPS) are taken on its orders. */
  solverId: string;
  /**
   * Whether the service's steps (the others) are taken too, on every order whoever its solver: the
   * service's solver runs them; a `hashlock solver` process holds neither the secrets nor the keys.
   */
  serviceSteps: boolean;
  /** The chain keys the solver serves; both sides of an order must be among them. */
  chains: readonly string[];
  limit: number;
  /** Only these orders (an event-driven pass over the orders that just changed); all when absent. */
  only?: readonly string[];
}

/**
 * No queued job for one of `actions` of the order is waiting, in flight or done: the step is taken,
 * and the order waits for the watcher to record it. A failed job's step is tried again. A job
 * written with its signed transaction (kind `signed`, a Bitcoin-family one) is (re)broadcast by the
 * pass itself, so its order stays in the pass.
 */
const noLiveJob = (...actions: string[]) =>
  sql`not exists (select 1 from relayer_jobs j where j.order_id = o.id and j.action in (${sql.join(actions.map((a) => sql`${a}`))})
    and j.status <> 'failed' and j.payload->>'kind' is distinct from 'signed')`;

/*
 * The status facts below are those of src/orders/status.ts (its rules and timelock comparison), turned
 * into SQL by status-sql.ts; what is the solver's own (jobs, the secret or key it holds, rule 5's
 * flags) is written here. The conditions are exported so that the status property test holds them to
 * `orderStatus`'s reading.
 */

const unsettled = (side: Side) => all(not(seen(side, 'redeem')), not(seen(side, 'refund')));

/** What the solver's steps ask of an order's status facts. */
export const SOLVER_CONDITIONS = {
  /** The source is initiated (the `initiated` rule: confirmed, with its confirmations) and open; the destination not initiated. */
  fund: all(statusRule('initiated'), unsettled('source'), not(seen('destination', 'initiate'))),
  /** The destination is confirmed with its confirmations, and open. */
  redeemForClient: all(confirmed('destination', 'initiate'), hasConfirmations('destination'), unsettled('destination')),
  /** The source is initiated (seen) and open. */
  redeemSource: all(seen('source', 'initiate'), unsettled('source')),
  /** Both redeems are confirmed (the `completed` rule). */
  accrue: statusRule('completed'),
  /** The destination's timelock has run out at the block the refund lands in (the next one), and it is open. */
  refund: all(timelockRunOut('destination', 'next'), unsettled('destination')),
  /** The source's timelock has run out at the block the refund lands in (the next one), and it is open. */
  refundSourceForClient: all(timelockRunOut('source', 'next'), unsettled('source')),
  /**
   * The order failed: its deadline passed (the `expired` rule's fact) with the destination not
   * initiated, though the source is initiated (the `initiated` rule) and open.
   */
  instantRefund: all(deadlinePassed, statusRule('initiated'), unsettled('source'), not(seen('destination', 'initiate'))),
} as const satisfies Record<string, Condition>;

/** The solver's steps, each of which selects the orders it is to be taken on. */
export const SOLVER_STEPS = ['fund', 'redeemForClient', 'redeemSource', 'accrue', 'refund', 'refundSourceForClient', 'instantRefund'] as const;
export type SolverStep = (typeof SOLVER_STEPS)[number];

/**
 * The steps a solver takes with its own keys on the orders matched to it; the rest are the service's:
 * the client's side with what the service holds for the client (its secret, its key) and the fees.
 */
export const SOLVER_OWN_STEPS: ReadonlySet<SolverStep> = new Set(['fund', 'redeemSource', 'refund', 'instantRefund']);

/** Each step's selection: its status facts (SOLVER_CONDITIONS) and what is the solver's own. */
const stepConditions = (nowSeconds: number): Record<SolverStep, RawBuilder<unknown>> => ({
  /** Source initiated with enough confirmations, not redeemed or refunded; destination not initiated; no instant refund. */
  fund: sql`not o.instant_refund_signed and ${conditionSql(SOLVER_CONDITIONS.fund)} and ${noLiveJob('solver-fund')}`,
  /** The service holds the secret; the destination is initiated and confirmed, neither redeemed nor refunded. */
  redeemForClient: sql`o.secret_ciphertext is not null and ${conditionSql(SOLVER_CONDITIONS.redeemForClient)} and ${noLiveJob('redeem')}`,
  /** The secret is on chain (destination redeemed) and the source is initiated, neither redeemed nor refunded. */
  redeemSource: sql`d.secret <> '' and ${conditionSql(SOLVER_CONDITIONS.redeemSource)} and ${noLiveJob('solver-redeem')}`,
  /** Completed (both redeems confirmed) with affiliate fees still pending. */
  accrue: sql`${conditionSql(SOLVER_CONDITIONS.accrue)} and exists (select 1 from affiliate_fees f where f.order_id = o.id and f.status = 'pending')`,
  /** The destination is initiated, neither redeemed nor refunded, and its timelock has run out at the watched height. */
  refund: sql`${conditionSql(SOLVER_CONDITIONS.refund)} and ${noLiveJob('solver-refund')}`,
  /**
   * The service holds the client's key of the source (no delegate given), and the source's timelock has
   * run out at the watched height with the source neither redeemed nor refunded: refund it to the client.
   */
  refundSourceForClient: sql`o.delegate_key_ciphertext is not null and s.delegate <> '' and ${conditionSql(SOLVER_CONDITIONS.refundSourceForClient)} and ${noLiveJob('refund')}`,
  /**
   * The client consented to an instant refund (migration 0011) and the order failed: its deadline has
   * passed (`nowSeconds`) with the destination neither initiated nor claimed for funding, though the
   * source is funded with the confirmations the funding step waits for (so the solver had its chance),
   * neither redeemed nor refunded, and no instant refund is queued yet.
   */
  instantRefund: sql`o.instant_refund_consent is not null and o.destination_funding_at is null
    and ${conditionSql(SOLVER_CONDITIONS.instantRefund, nowSeconds)}
    and not exists (select 1 from relayer_jobs j where j.order_id = o.id and j.action = 'instant-refund')`,
});

/**
 * What every step needs, in cheap column checks: a side still open, or fees to accrue (the only step
 * of a settled order). A settled order, which is most of a solver's history, costs a full pass no subplan.
 */
const mayNeedAStep = conditionSql(any(unsettled('source'), unsettled('destination'), SOLVER_CONDITIONS.accrue));

/** A solver pass's work: each step's order ids, oldest first, and those orders read. */
export interface SolverWork {
  steps: Record<SolverStep, string[]>;
  orders: Map<string, OrderRecord>;
}

/**
 * The orders each step is to be taken on, oldest first, at most `limit` per step, read as
 * `findOrders` does: one statement for the whole pass (a pass runs after every change of an order,
 * so its round trips are what a swap waits for).
 *
 * The statement reads each order once and computes every step's condition as a column. The planner
 * plans that in well under a millisecond; one subquery per step, each with its own joins and
 * anti-joins, took about 10 ms to plan, more than running it, on every pass. `offset 0` keeps the
 * conditions in the select list (per-row subplans) rather than letting them be pulled up into joins.
 */
export async function solverWork(db: Db, q: SolverQuery & { nowSeconds: number }): Promise<SolverWork> {
  const steps = Object.fromEntries(SOLVER_STEPS.map((step) => [step, [] as string[]])) as Record<SolverStep, string[]>;
  const orders = new Map<string, OrderRecord>();
  if (q.only?.length === 0) return { steps, orders };
  const chains = sql`any(${[...q.chains]}::text[])`;
  const only = q.only ? sql`and o.id = any(${[...q.only]}::text[])` : sql``;
  const conditions = stepConditions(q.nowSeconds);
  const own = sql`o.solver_id = ${q.solverId}`;
  const taken = (step: SolverStep) => (SOLVER_OWN_STEPS.has(step) ? sql`${own} and ${conditions[step]}` : q.serviceSteps ? conditions[step] : sql`false`);
  const flags = sql.join(SOLVER_STEPS.map((step, i) => sql`(${taken(step)}) as ${sql.ref(`f${i}`)}`));
  // Each step's running count, oldest first: a backlog of one step never hides another step's orders.
  const counts = sql.join(SOLVER_STEPS.map((_, i) => sql`count(*) filter (where ${sql.ref(`f${i}`)}) over (order by created_at, id) as ${sql.ref(`n${i}`)}`));
  const withinLimit = sql.join(
    SOLVER_STEPS.map((_, i) => sql`(${sql.ref(`f${i}`)} and ${sql.ref(`n${i}`)} <= ${q.limit})`),
    sql` or `,
  );
  const work = sql<Record<`f${number}`, boolean> & { id: string; created_at: unknown }>`
    select * from (
      select w.*, ${counts} from (
        select o.id, o.created_at, ${flags}
        from orders o
        join swaps s on s.order_id = o.id and s.side = 'source'
        join swaps d on d.order_id = o.id and d.side = 'destination'
        where ${q.serviceSteps ? sql`true` : own} and s.chain = ${chains} and d.chain = ${chains} ${only} and ${mayNeedAStep}
        offset 0
      ) w
    ) c
    where ${withinLimit}
  `;
  for (const { order, row } of await findOrdersOf(db, work, sql`order by w.created_at, w.id`)) {
    orders.set(order.id, order);
    SOLVER_STEPS.forEach((step, i) => {
      if (row[`f${i}`] && steps[step].length < q.limit) steps[step].push(row.id);
    });
  }
  return { steps, orders };
}

/**
 * Rule 5: refuses when the solver co-signed an instant refund, and otherwise records the intent to
 * fund the destination (`destination_funding_at`, migration 0007) before anything is broadcast; the
 * instant-refund gate refuses from then on. One conditional update: it takes the order's row lock,
 * and one waiting on the gate's lock reads the flag the gate committed. Idempotent.
 */
export async function claimFunding(db: Db, orderId: string): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update orders set destination_funding_at = coalesce(destination_funding_at, now())
    where id = ${orderId} and not instant_refund_signed
    returning id
  `.execute(db);
  return rows.length === 1;
}

/** `claimFunding` for many orders in one statement; returns the ids claimed (each under its row lock). */
export async function claimFundings(db: Db, orderIds: readonly string[]): Promise<Set<string>> {
  if (orderIds.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    update orders set destination_funding_at = coalesce(destination_funding_at, now())
    where id in (${sql.join(orderIds.map((id) => sql`${id}`))}) and not instant_refund_signed
    returning id
  `.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** The sealed service-held secrets of orders, in their order (null where the service holds none), in one select. */
export async function secretCiphertexts(db: Db, orderIds: readonly string[]): Promise<Array<Uint8Array | null>> {
  const rows = await db.selectFrom('orders').select(['id', 'secret_ciphertext']).where('id', 'in', [...new Set(orderIds)]).execute();
  const byId = new Map(rows.map((r) => [r.id, r.secret_ciphertext]));
  return orderIds.map((id) => byId.get(id) ?? null);
}
