import { sql, type RawBuilder } from 'kysely';
import type { PartyMatchKey } from '../chains/adapter.ts';
import { STATUS_GROUPS, type StatusGroup } from '../orders/status-groups.ts';
import type { Db } from './database.ts';
import { statusInSql } from './status-sql.ts';

export interface OrderListQuery {
  /** The creating app; undefined: every app's orders (the explorer). */
  appId?: string | undefined;
  // The party and hash filters come as the keys of the asked value on the chains where it names
  // one (`partyMatchKeys`, `txHashMatchKeys` of src/chains/adapters.ts): how a chain compares its
  // addresses is its adapter's decision. An empty list matches nothing.
  /** Initiator, redeemer or delegate of either swap. */
  address?: readonly PartyMatchKey[] | undefined;
  /** The source swap's initiator (the client's source address). */
  fromOwner?: readonly PartyMatchKey[] | undefined;
  /** The destination swap's redeemer (the client's payout address). */
  toOwner?: readonly PartyMatchKey[] | undefined;
  /** Any initiate, redeem or refund transaction of either swap, in the form stored. */
  txHash?: readonly string[] | undefined;
  fromChain?: string | undefined;
  toChain?: string | undefined;
  solverId?: string | undefined;
  integrator?: string | undefined;
  /** Only these orders. */
  orderIds?: readonly string[] | undefined;
  /** Orders created at or after this unix second. */
  createdFrom?: number | undefined;
  /** Orders created at or before this unix second. */
  createdTo?: number | undefined;
  /** Orders in any of these groups; none or empty: every order. */
  statusGroups?: readonly StatusGroup[] | undefined;
  /** The clock (unix seconds) the statuses are judged by. */
  nowUnix: number;
  page: number;
  perPage: number;
}

/**
 * Orders whose status is in one of the groups: the status as `orderStatus` derives it, generated from its
 * rules (status-sql.ts), at the query's clock and the heights in `chain_heights`. (A group never depends on
 * the heights in fact: the one height-bound status, `awaiting_refund`, shares `in-progress` with every
 * status it can come from or fall back to.)
 */
function inStatusGroups(groups: readonly StatusGroup[], nowUnix: number): RawBuilder<unknown> {
  const statuses = [...new Set(groups.flatMap((g) => STATUS_GROUPS[g]))];
  return statusInSql(statuses, nowUnix);
}

const list = (keys: readonly string[]) => sql.join(keys.map((k) => sql`${k}`));

/**
 * A party column matching one of `keys`. The party indexes are on lower(column): every key is
 * looked up in lowercase, and an exact key must also equal the column as written.
 */
function partyIn(column: string, keys: readonly PartyMatchKey[]): RawBuilder<unknown> {
  if (keys.length === 0) return sql`false`;
  const c = sql.ref(column);
  const lowered = (ks: readonly PartyMatchKey[]) => sql.join(ks.map((k) => sql`lower(${k.key})`));
  const found = sql`lower(${c}) in (${lowered(keys)})`;
  const exact = keys.filter((k) => k.exact);
  const anyCase = keys.filter((k) => !k.exact);
  if (exact.length === 0) return found;
  const exactly = sql`${c} in (${list(exact.map((k) => k.key))})`;
  if (anyCase.length === 0) return sql`(${found} and ${exactly})`;
  return sql`(${found} and (${exactly} or lower(${c}) in (${lowered(anyCase)})))`;
}

/** A party filter's predicates on one swap, one per role (`swap` is a table alias and dot, or ''). */
function partyRoles(swap: string, keys: readonly PartyMatchKey[]): RawBuilder<unknown>[] {
  return [
    partyIn(`${swap}initiator`, keys),
    partyIn(`${swap}redeemer`, keys),
    sql`${partyIn(`${swap}delegate`, keys)} and ${sql.ref(`${swap}delegate`)} <> ''`,
  ];
}

/**
 * A transaction hash filter's predicates on one swap, one per transaction it records: any of the
 * funding transactions of a swap funded by several (`initiate_tx_hashes`), its redeem, its refund.
 */
function txHashColumns(swap: string, hashes: readonly string[]): RawBuilder<unknown>[] {
  return [
    sql`${sql.ref(`${swap}initiate_tx_hashes`)} && array[${list(hashes)}]::text[]`,
    ...['redeem_tx_hash', 'refund_tx_hash'].map((c) => sql`${sql.ref(`${swap}${c}`)} in (${list(hashes)}) and ${sql.ref(`${swap}${c}`)} <> ''`),
  ];
}

/**
 * The filters as predicates on an order `o` and its swaps `s` and `d`. Searching all orders, the party
 * and hash filters are indexed lookups in `swaps`, one per role; `onRows` (the rows are already
 * chosen, as when one order is checked against many filters) tests the same roles on the joined
 * rows instead, which is the same answer without a subquery per filter.
 */
function conditions(q: OrderListQuery, onRows = false): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [q.appId === undefined ? sql`true` : sql`o.app_id = ${q.appId}`];
  // Any of the predicates, on either swap of the order.
  const onEitherSwap = (predicates: (swap: string) => RawBuilder<unknown>[]) =>
    onRows
      ? sql`(${sql.join([...predicates('s.'), ...predicates('d.')].map((p) => sql`(${p})`), sql` or `)})`
      : // One indexed lookup per role rather than an OR across columns, which no index serves.
        sql`o.id in (${sql.join(predicates('').map((p) => sql`select order_id from swaps where ${p}`), sql` union all `)})`;
  if (q.address !== undefined) where.push(onEitherSwap((swap) => partyRoles(swap, q.address!)));
  if (q.orderIds !== undefined) where.push(q.orderIds.length === 0 ? sql`false` : sql`o.id in (${list(q.orderIds)})`);
  if (q.fromOwner !== undefined) where.push(partyIn('s.initiator', q.fromOwner));
  if (q.toOwner !== undefined) where.push(partyIn('d.redeemer', q.toOwner));
  if (q.txHash !== undefined) where.push(q.txHash.length === 0 ? sql`false` : onEitherSwap((swap) => txHashColumns(swap, q.txHash!)));
  if (q.fromChain !== undefined) where.push(sql`s.chain = ${q.fromChain}`);
  if (q.toChain !== undefined) where.push(sql`d.chain = ${q.toChain}`);
  if (q.solverId !== undefined) where.push(sql`o.solver_id = ${q.solverId}`);
  if (q.integrator !== undefined) where.push(sql`o.integrator = ${q.integrator}`);
  if (q.createdFrom !== undefined) where.push(sql`o.created_at >= to_timestamp(${q.createdFrom})`);
  if (q.createdTo !== undefined) where.push(sql`o.created_at <= to_timestamp(${q.createdTo})`);
  if (q.statusGroups && q.statusGroups.length > 0) {
    where.push(inStatusGroups(q.statusGroups, q.nowUnix));
  }
  return where;
}

/**
 * One page of an app's orders (or every app's), newest first, with the number of all matches: one round trip that
 * returns ids only (callers load the orders through the order read cache).
 */
export async function listOrderIds(db: Db, q: OrderListQuery): Promise<{ ids: string[]; total: number }> {
  const result = await sql<{ total: string; ids: string[] | string }>`
    with matched as (
      select o.id, o.created_at
      from orders o
      join swaps s on s.order_id = o.id and s.side = 'source'
      join swaps d on d.order_id = o.id and d.side = 'destination'
      where ${sql.join(conditions(q), sql` and `)}
    )
    select (select count(*) from matched) as total,
      (select coalesce(json_agg(p.id order by p.created_at desc, p.id desc), '[]'::json)
        from (select id, created_at from matched order by created_at desc, id desc
          limit ${q.perPage} offset ${(q.page - 1) * q.perPage}) p) as ids
  `.execute(db);
  const row = result.rows[0]!;
  const ids = typeof row.ids === 'string' ? (JSON.parse(row.ids) as string[]) : row.ids;
  return { ids, total: Number(row.total) };
}

/**
 * The order list's filters but the status groups, and without paging: what a `/v2/events` stream
 * asks of an order (it judges the status on the event itself).
 */
export type OrderFilter = Omit<OrderListQuery, 'page' | 'perPage' | 'orderIds' | 'statusGroups' | 'nowUnix'>;

/** Postgres allows 1,664 columns in a select list; one statement answers this many filters. */
const FILTERS_PER_STATEMENT = 1_000;

/**
 * Whether one order matches each filter, as `listOrderIds` would find it: one statement answers up
 * to a thousand filters (one boolean column each), so the streams an event reaches are filtered
 * together. An unknown order matches none.
 */
export async function orderMatchesFilters(db: Db, orderId: string, filters: readonly OrderFilter[]): Promise<boolean[]> {
  const matches: boolean[] = [];
  for (let from = 0; from < filters.length; from += FILTERS_PER_STATEMENT) {
    const chunk = filters.slice(from, from + FILTERS_PER_STATEMENT);
    const columns = chunk.map((f, i) => sql`(${sql.join(conditions({ ...f, nowUnix: 0, page: 1, perPage: 1 }, true), sql` and `)}) as ${sql.ref(`m${i}`)}`);
    const result = await sql<Record<string, boolean>>`
      select ${sql.join(columns)}
      from orders o
      join swaps s on s.order_id = o.id and s.side = 'source'
      join swaps d on d.order_id = o.id and d.side = 'destination'
      where o.id = ${orderId}
    `.execute(db);
    const row = result.rows[0];
    chunk.forEach((_f, i) => matches.push(row?.[`m${i}`] === true));
  }
  return matches;
}

/** Per source asset, what the matching orders moved and earned, for `GET /v2|v3/volume` and `/fees`. */
export interface SourceTotals {
  asset: string;
  /** Σ source amount × source USD price × 100: cents, still in the asset's base units. */
  valueCentsUnits: bigint;
  /** Σ source amount × source USD price × solver fee bips × 100 / 10,000: the solver fee in cents, in base units. */
  feeCentsUnits: bigint;
  /** Σ fixed fees, in cents. */
  fixedFeeCents: bigint;
}

/** Totals of the orders matching `q` (every app's when `appId` is undefined), grouped by source asset. */
export async function sourceTotals(db: Db, q: Omit<OrderListQuery, 'page' | 'perPage'>): Promise<SourceTotals[]> {
  const result = await sql<{ asset: string; value: string; fee: string; fixed: string }>`
    select s.asset,
      round(coalesce(sum(s.amount * s.asset_price::numeric * 100), 0))::text as value,
      round(coalesce(sum(s.amount * s.asset_price::numeric * qt.fee_bips / 100), 0))::text as fee,
      round(coalesce(sum(qt.fixed_fee::numeric * 100), 0))::text as fixed
    from orders o
    join swaps s on s.order_id = o.id and s.side = 'source'
    join swaps d on d.order_id = o.id and d.side = 'destination'
    join quotes qt on qt.order_id = o.id
    where ${sql.join(conditions({ ...q, page: 1, perPage: 1 }), sql` and `)}
    group by s.asset
    order by s.asset
  `.execute(db);
  return result.rows.map((r) => ({ asset: r.asset, valueCentsUnits: BigInt(r.value), feeCentsUnits: BigInt(r.fee), fixedFeeCents: BigInt(r.fixed) }));
}
