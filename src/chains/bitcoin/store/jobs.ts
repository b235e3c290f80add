import { sql } from 'kysely';
import type { TxVersion } from '../rbf.ts';
import type { Outpoint } from '../wallet-tx.ts';
import type { Db } from '../../../store/database.ts';


/** A signed version of a job's transaction (see `TxVersion` in chains/bitcoin/rbf.ts). */
interface Version {
  txid: string;
  hex: string;
  feeRate: string;
}

/** A Bitcoin-family relayer job as the fee bumper reads it. */
export interface BitcoinJobRow {
  idempotencyKey: string;
  orderId: string | null;
  action: string;
  status: string;
  /** The current transaction's txid (a replacement's once replaced). */
  txid: string;
  /** The txid the job was written with. */
  firstTxid: string;
  /** The key of the job this one bumps (a CPFP child), or null. */
  bumps: string | null;
  /** Its replacements signed up front, lowest fee first (none when it cannot be replaced). */
  replacements: Version[];
}

interface Row {
  idempotency_key: string;
  order_id: string | null;
  action: string;
  status: string;
  tx_hash: string;
  first_txid: string;
  bumps: string | null;
  replacements: Version[] | string | null;
}

const toJob = (r: Row): BitcoinJobRow => ({
  idempotencyKey: r.idempotency_key,
  orderId: r.order_id,
  action: r.action,
  status: r.status,
  txid: r.tx_hash,
  firstTxid: r.first_txid,
  bumps: r.bumps,
  replacements: (typeof r.replacements === 'string' ? (JSON.parse(r.replacements) as Version[]) : r.replacements) ?? [],
});

/** Every bump job (settled or not) of the jobs with `keys`, oldest first. */
export async function bumpsOf(db: Db, chain: string, keys: readonly string[]): Promise<BitcoinJobRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<Row>`
    select idempotency_key, order_id, action, status, tx_hash, payload->>'txid' as first_txid, payload->>'bumps' as bumps, payload->'replacements' as replacements
    from relayer_jobs
    where chain = ${chain} and payload->>'kind' = 'signed'
      and payload->>'bumps' in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))
    order by id
  `.execute(db);
  return rows.map(toJob);
}

export interface BitcoinTxJob {
  chain: string;
  orderId?: string;
  /** What the transaction does: fund, redeem, refund, instant-refund. */
  action: string;
  idempotencyKey: string;
  rawTx: string;
  txid: string;
  /** The outpoints it spends: reserved from the wallet until the job settles. */
  inputs: readonly Outpoint[];
  /** For a fee bump (a CPFP child): the key of the job whose transaction it pays for. */
  bumps?: string;
  /** Replacements (BIP125) of the transaction at higher fees, signed up front, lowest first. */
  replacements?: readonly TxVersion[];
  /** The latest moment it may first reach the chain (safety rule 2, for a funding). */
  broadcastBy?: Date;
}

export interface BitcoinPayload {
  kind: 'signed';
  txid: string;
  inputs: Outpoint[];
  bumps?: string;
  replacements?: TxVersion[];
}

/** Writes a signed transaction's job, or returns the job already written under the same key. */
export async function enqueueBitcoinTx(db: Db, tx: BitcoinTxJob): Promise<{ txid: string; created: boolean; status: string }> {
  const payload: BitcoinPayload = {
    kind: 'signed',
    txid: tx.txid,
    inputs: tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout })),
    ...(tx.bumps ? { bumps: tx.bumps } : {}),
    ...(tx.replacements?.length ? { replacements: tx.replacements.map((r) => ({ txid: r.txid, hex: r.hex, feeRate: r.feeRate })) } : {}),
  };
  const { rows } = await sql<{ tx_hash: string; status: string; created: boolean }>`
    insert into relayer_jobs (chain, order_id, action, idempotency_key, payload, raw_tx, tx_hash, tx_hashes, signed_at, broadcast_by)
    values (${tx.chain}, ${tx.orderId ?? null}, ${tx.action}, ${tx.idempotencyKey}, ${JSON.stringify(payload)}::jsonb,
      ${tx.rawTx}, ${tx.txid}, array[${tx.txid}::text], now(), ${tx.broadcastBy ?? null}::timestamptz)
    on conflict (idempotency_key) do update set updated_at = relayer_jobs.updated_at
    returning tx_hash, status, (xmax = 0) as created
  `.execute(db);
  const row = rows[0]!;
  return { txid: row.tx_hash, created: row.created, status: row.status };
}

/** A Bitcoin job's transaction and status, by key. */
export async function bitcoinJobTx(db: Db, idempotencyKey: string): Promise<{ txid: string; rawTx: string; status: string } | undefined> {
  const { rows } = await sql<{ tx_hash: string; raw_tx: string; status: string }>`
    select tx_hash, raw_tx, status from relayer_jobs where idempotency_key = ${idempotencyKey}
  `.execute(db);
  const row = rows[0];
  return row && { txid: row.tx_hash, rawTx: row.raw_tx, status: row.status };
}

/** One of an order's funding jobs, as the solver reads them to tell whether it may fund again. */
export interface FundingAttempt {
  idempotencyKey: string;
  status: string;
  broadcastBy: Date | null;
  /** It failed by safety rule 2 (the engine's reason says so, or it was cancelled past its deadline). */
  byRule2: boolean;
  /** One of its inputs was spent in a block by a transaction not its own: it can never be mined. */
  spentElsewhere: boolean;
}

/** The order's funding jobs on the chain (`<order>:fund`, then `<order>:fund:<n>`), oldest first. */
export async function fundingAttempts(db: Db, chain: string, orderId: string): Promise<FundingAttempt[]> {
  const { rows } = await sql<{ idempotency_key: string; status: string; broadcast_by: Date | string | null; by_rule_2: boolean; spent_elsewhere: boolean }>`
    select j.idempotency_key, j.status, j.broadcast_by,
      (j.cancelled_at is not null or j.last_error like '%(safety rule 2)%') as by_rule_2,
      exists (
        select 1 from jsonb_array_elements(j.payload->'inputs') i
        join bitcoin_utxos u on u.chain = j.chain and u.txid = i->>'txid' and u.vout = (i->>'vout')::int
        where u.spent_block_number is not null and u.spent_txid is not null and not (u.spent_txid = any(j.tx_hashes))
      ) as spent_elsewhere
    from relayer_jobs j
    where j.order_id = ${orderId} and j.action = 'fund' and j.chain = ${chain} and j.payload->>'kind' = 'signed'
    order by j.id
  `.execute(db);
  return rows.map((r) => ({
    idempotencyKey: r.idempotency_key,
    status: r.status,
    broadcastBy: r.broadcast_by === null ? null : new Date(r.broadcast_by),
    byRule2: r.by_rule_2,
    spentElsewhere: r.spent_elsewhere,
  }));
}

/** An unsettled job's transaction that another spends an output of. */
export interface ParentTx {
  txid: string;
  rawTx: string;
  /** Its job's broadcast deadline (safety rule 2), ms since the epoch. */
  broadcastBy: number | null;
}

/**
 * The chain's signed, unsettled jobs whose current transactions `txids` spend outputs of, and theirs
 * in turn: what must reach a node before a transaction spending their outputs can. Oldest ancestors first.
 */
export async function unsettledParents(db: Db, chain: string, txids: readonly string[]): Promise<ParentTx[]> {
  if (txids.length === 0) return [];
  const { rows } = await sql<{ tx_hash: string; raw_tx: string; broadcast_by: Date | string | null }>`
    with recursive parents(id, tx_hash, raw_tx, inputs, broadcast_by, depth) as (
      select j.id, j.tx_hash, j.raw_tx, j.payload->'inputs', j.broadcast_by, 1
      from relayer_jobs j
      where j.chain = ${chain} and j.payload->>'kind' = 'signed' and j.status in ('queued', 'running', 'submitted') and j.raw_tx <> ''
        and j.tx_hash in (select jsonb_array_elements_text(${JSON.stringify(txids)}::jsonb))
      union
      select j.id, j.tx_hash, j.raw_tx, j.payload->'inputs', j.broadcast_by, p.depth + 1
      from parents p cross join lateral jsonb_array_elements(p.inputs) i
      join relayer_jobs j on j.chain = ${chain} and j.tx_hash = i->>'txid'
      where j.payload->>'kind' = 'signed' and j.status in ('queued', 'running', 'submitted') and j.raw_tx <> '' and p.depth < 30
    )
    select tx_hash, raw_tx, broadcast_by from parents group by id, tx_hash, raw_tx, broadcast_by order by max(depth) desc, id
  `.execute(db);
  return rows.map((r) => ({ txid: r.tx_hash, rawTx: r.raw_tx, broadcastBy: r.broadcast_by === null ? null : new Date(r.broadcast_by).getTime() }));
}

/**
 * Runs `fn` in a transaction holding the chain's wallet lock (a transaction-scoped advisory lock):
 * whoever picks outputs of the solver's wallet and writes the job spending them (instant-refund fees,
 * the solver's fundings) does both under it, so two writers never pick the same
 * output before either job reserves it.
 */
export function withWalletLock<T>(db: Db, chainKey: string, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`hashlock:bitcoin-wallet:${chainKey}`}))`.execute(trx);
    return fn(trx);
  });
}

/** Outpoints that unsettled jobs of the chain spend: the wallet must not select them again. */
export async function reservedOutpoints(db: Db, chain: string): Promise<Set<string>> {
  const { rows } = await sql<{ txid: string; vout: number }>`
    select i->>'txid' as txid, (i->>'vout')::int as vout
    from relayer_jobs j, jsonb_array_elements(j.payload->'inputs') i
    where j.chain = ${chain} and j.payload->>'kind' = 'signed' and j.status in ('queued', 'running', 'submitted')
  `.execute(db);
  return new Set(rows.map((r) => outpointKey(r)));
}

export const outpointKey = (o: Outpoint): string => `${o.txid}:${o.vout}`;
