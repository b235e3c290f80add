import { sql } from 'kysely';
import type { Db } from '../../../store/database.ts';

/** A Bitcoin-family job transaction that is not settled yet (queued, running or submitted). */
export interface PendingBitcoinTx {
  txid: string;
  rawTx: string;
  inputs: Array<{ txid: string; vout: number }>;
}

/**
 * The chain's Bitcoin-family jobs whose transactions are signed and not settled: what a wallet may
 * still build on (their change) and what they already spend (their inputs).
 */
export async function pendingBitcoinTxs(db: Db, chain: string): Promise<PendingBitcoinTx[]> {
  const { rows } = await sql<{ tx_hash: string; raw_tx: string; inputs: Array<{ txid: string; vout: number }> | null }>`
    select tx_hash, raw_tx, payload->'inputs' as inputs from relayer_jobs
    where chain = ${chain} and payload->>'kind' = 'signed' and status in ('queued', 'running', 'submitted') and raw_tx <> ''
  `.execute(db);
  return rows.map((r) => ({ txid: r.tx_hash, rawTx: r.raw_tx, inputs: (r.inputs ?? []).map((i) => ({ txid: i.txid, vout: Number(i.vout) })) }));
}

/** Of `outpoints`, those the watcher recorded as spent (in a block or in the mempool), as `txid:vout`. */
export async function recordedSpent(db: Db, chain: string, outpoints: ReadonlyArray<{ txid: string; vout: number }>): Promise<Set<string>> {
  if (outpoints.length === 0) return new Set();
  const { rows } = await sql<{ txid: string; vout: number }>`
    select u.txid, u.vout from bitcoin_utxos u
    join jsonb_to_recordset(${JSON.stringify(outpoints)}::jsonb) as i(txid text, vout int) on u.txid = i.txid and u.vout = i.vout
    where u.chain = ${chain} and u.spent_txid is not null
  `.execute(db);
  return new Set(rows.map((r) => `${r.txid}:${r.vout}`));
}
