import { sql, type RawBuilder } from 'kysely';
import { all, any, not, readsClock, STATUS_RULES, type Condition, type OrderStatus, type Side, type TxKind } from '../orders/status.ts';
import type { SwapsTable } from './schema.ts';

/**
 * The SQL reading of the status conditions of src/orders/status.ts: the order list's status filter,
 * the event log's searches and the solver's queries are generated from the same rules and facts as
 * `orderStatus`, never written again by hand. The SQL reads an order as `o` and its swaps as `s` (the
 * source) and `d` (the destination), and the chains' current heights from `chain_heights`.
 *
 * Every fact is a comparison of non-null columns or an `exists`, so no condition is ever null and
 * `not` means what it says.
 */

const ALIAS: Record<Side, 's' | 'd'> = { source: 's', destination: 'd' };

/** A swap column of one side, checked against the schema type. */
const column = (side: Side, name: keyof SwapsTable): string => `${ALIAS[side]}.${name}`;
const txHash = (side: Side, tx: TxKind) => column(side, `${tx}_tx_hash`);
const blockNumber = (side: Side, tx: TxKind) => column(side, `${tx}_block_number`);

/** A condition as a SQL boolean over `o`, `s` and `d`; `nowUnix` is the clock's second, needed where the deadline is read. */
export function conditionSql(c: Condition, nowUnix?: number): RawBuilder<boolean> {
  if ('all' in c) return c.all.length === 0 ? sql<boolean>`true` : sql<boolean>`(${sql.join(c.all.map((p) => conditionSql(p, nowUnix)), sql` and `)})`;
  if ('any' in c) return c.any.length === 0 ? sql<boolean>`false` : sql<boolean>`(${sql.join(c.any.map((p) => conditionSql(p, nowUnix)), sql` or `)})`;
  if ('not' in c) return sql<boolean>`(not ${conditionSql(c.not, nowUnix)})`;
  switch (c.fact) {
    case 'seen':
      return sql.raw<boolean>(`${txHash(c.side, c.tx)} <> ''`);
    case 'confirmed':
      return sql.raw<boolean>(`(${txHash(c.side, c.tx)} <> '' and ${blockNumber(c.side, c.tx)} <> 0)`);
    case 'confirmations':
      return sql.raw<boolean>(`${column(c.side, 'current_confirmations')} >= ${column(c.side, 'required_confirmations')}`);
    case 'timelockRunOut': {
      // `timelockRunOutAt` of src/orders/status.ts: block > initiate block + timelock, the block being the
      // chain's current height or the next one.
      const block = c.block === 'next' ? 'h.height + 1' : 'h.height';
      return sql.raw<boolean>(
        `(${txHash(c.side, 'initiate')} <> '' and ${blockNumber(c.side, 'initiate')} <> 0 and exists (select 1 from chain_heights h ` +
          `where h.chain = ${column(c.side, 'chain')} and ${block} > ${blockNumber(c.side, 'initiate')} + ${column(c.side, 'timelock')}))`,
      );
    }
    case 'deadlinePassed':
      if (nowUnix === undefined) throw new Error('the deadline condition needs the clock');
      return sql<boolean>`o.deadline < ${nowUnix}`;
  }
}

/** The tables a condition reads (`o` the order, `s` and `d` its swaps), so that a query joins only those. */
export function tablesRead(c: Condition): Set<'o' | 's' | 'd'> {
  if ('all' in c) return new Set(c.all.flatMap((p) => [...tablesRead(p)]));
  if ('any' in c) return new Set(c.any.flatMap((p) => [...tablesRead(p)]));
  if ('not' in c) return tablesRead(c.not);
  return new Set([c.fact === 'deadlinePassed' ? 'o' : ALIAS[c.side]]);
}

/** The order's status as `orderStatus` derives it, at the clock `nowUnix` and the heights in `chain_heights`. */
export function statusSql(nowUnix: number): RawBuilder<OrderStatus> {
  const whens = STATUS_RULES.map(([status, rule]) => sql`when ${conditionSql(rule, nowUnix)} then ${sql.lit(status)}`);
  return sql<OrderStatus>`(case ${sql.join(whens, sql` `)} else 'created' end)`;
}

/**
 * The order's status is one of `statuses`, as a predicate rather than `statusSql(...) in (...)`: the
 * statuses are cut into runs of neighbouring ranks, and a run holds when no rule above it holds and one
 * of its rules does (the first true rule is in the run). Checking the rules a run needs, not the whole
 * cascade, keeps a filter on the top statuses as cheap as the few comparisons it takes, and the rules
 * that read chain heights are asked last.
 */
export function statusInSql(statuses: readonly OrderStatus[], nowUnix: number): RawBuilder<boolean> {
  // STATUS_RULES runs from the highest rank down; 'created' is below them all (at index STATUS_RULES.length).
  const ranked: OrderStatus[] = [...STATUS_RULES.map(([status]) => status), 'created'];
  const wanted = ranked.map((status) => statuses.includes(status));
  const runs: Array<[number, number]> = [];
  wanted.forEach((w, i) => {
    if (!w) return;
    const last = runs.at(-1);
    if (last && last[1] === i - 1) last[1] = i;
    else runs.push([i, i]);
  });
  if (runs.length === 0) return sql<boolean>`false`;
  const rules = (from: number, to: number) => STATUS_RULES.slice(from, to).map(([, rule]) => rule);
  const cheapFirst = (conditions: Condition[]) => [...conditions.filter((c) => !readsClock(c)), ...conditions.filter(readsClock)];
  const predicates = runs.map(([first, last]) => {
    const parts: Condition[] = [];
    if (first > 0) parts.push(not(any(...cheapFirst(rules(0, first)))));
    // A run down to 'created' needs no rule of its own: none above it holds.
    if (last < STATUS_RULES.length) parts.push(any(...cheapFirst(rules(first, last + 1))));
    return conditionSql(all(...parts), nowUnix);
  });
  return sql<boolean>`(${sql.join(predicates, sql` or `)})`;
}

/** SQL text literals of some statuses, for an `in (...)` list. */
export const statusList = (statuses: readonly OrderStatus[]) => sql.join(statuses.map((s) => sql.lit(s)));
