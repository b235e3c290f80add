import { sql } from 'kysely';
import type { Db } from './database.ts';

/** A Bitcoin-family relayer job as the fee bumper reads it. */
export interface BitcoinJobRow {
  idempotencyKey: string;
  orderId: string | null;
  action: string;
  status: string;
  txid: string;
  /** The key of the job this one bumps (a CPFP child), or null. */
  bumps: string | null;
}

interface Row {
  idempotency_key: string;
  order_id: string | null;
  action: string;
  status: string;
  tx_hash: string;
  bumps: string | null;
}

const toJob = (r: Row): BitcoinJobRow => ({
  idempotencyKey: r.idempotency_key,
  orderId: r.order_id,
  action: r.action,
  status: r.status,
  txid: r.tx_hash,
  bumps: r.bumps,
});

/** The chain's unsettled Bitcoin-family jobs that are not themselves bumps, oldest first. */
export async function unsettledBitcoinJobs(db: Db, chain: string): Promise<BitcoinJobRow[]> {
  const { rows } = await sql<Row>`
    select idempotency_key, order_id, action, status, tx_hash, payload->>'bumps' as bumps
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
    select idempotency_key, order_id, action, status, tx_hash, payload->>'bumps' as bumps
    from relayer_jobs
    where chain = ${chain} and payload->>'kind' = 'bitcoin'
      and payload->>'bumps' in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))
    order by id
  `.execute(db);
  return rows.map(toJob);
}
