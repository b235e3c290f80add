import { sql } from 'kysely';
import type { Db } from './database.ts';

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

/** The chain's unsettled Bitcoin-family jobs that are not themselves bumps, oldest first. */
export async function unsettledBitcoinJobs(db: Db, chain: string): Promise<BitcoinJobRow[]> {
  const { rows } = await sql<Row>`
    select idempotency_key, order_id, action, status, tx_hash, payload->>'txid' as first_txid, payload->>'bumps' as bumps, payload->'replacements' as replacements
    from relayer_jobs
    where chain = ${chain} and payload->>'kind' = 'bitcoin' and status in ('queued', 'running', 'submitted')
      and payload->>'bumps' is null
    order by id
  `.execute(db);
  return rows.map(toJob);
}

/** Every bump job (settled or not) of the jobs with `keys`, oldest first. */
export async function bumpsOf(db: Db, chain: string, keys: readonly string[]): Promise<BitcoinJobRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<Row>`
    select idempotency_key, order_id, action, status, tx_hash, payload->>'txid' as first_txid, payload->>'bumps' as bumps, payload->'replacements' as replacements
    from relayer_jobs
    where chain = ${chain} and payload->>'kind' = 'bitcoin'
      and payload->>'bumps' in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))
    order by id
  `.execute(db);
  return rows.map(toJob);
}

/**
 * Makes `to` the job's current transaction in place of `from` (what the relayer rebroadcasts), its
 * txid added to `tx_hashes`. Only while the job is submitted, not held by a relayer worker (which may
 * be sending what it read). False when the job no longer holds `from` so: another worker replaced it
 * first, a relayer holds it, or it settled.
 */
export async function replaceBitcoinTx(db: Db, idempotencyKey: string, from: string, to: { txid: string; hex: string }): Promise<boolean> {
  const result = await sql`
    update relayer_jobs set raw_tx = ${to.hex}, tx_hash = ${to.txid}, tx_hashes = case when ${to.txid}::text = any(tx_hashes) then tx_hashes else array_append(tx_hashes, ${to.txid}::text) end,
      signed_at = now(), updated_at = now()
    where idempotency_key = ${idempotencyKey} and tx_hash = ${from} and status = 'submitted'
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}
