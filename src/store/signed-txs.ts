import { sql } from 'kysely';
import type { Db } from './database.ts';
import { decisionTime } from './decision-time.ts';
import { prepared } from './prepared.ts';
import type { RelayerJob } from './relayer-jobs.ts';
import type { JobSigner } from './schema.ts';

/**
 * The signed-transaction columns of relayer_jobs (migration 0006). Every write is conditional on the
 * worker still holding the job, so a worker whose lease ran out cannot record or send anything.
 */

export interface SignedTx {
  /** The signed bytes as the family's node takes them (EVM hex, Solana base64, Bitcoin hex). */
  raw: string;
  /** The transaction's id on its chain (EVM hash, Solana signature, Bitcoin txid). */
  hash: string;
  /** Its account's sequence number (EVM); null where the family has none. */
  nonce: bigint | null;
  /** The last block height at which it can land (Solana: its blockhash's); null where it does not expire so. */
  validUntilHeight: bigint | null;
  /** Every id signed for the job, the current one last. */
  hashes: string[];
  /** Milliseconds since `raw` was signed. */
  ageMs: number;
}

/** What is written of a transaction as it is signed. */
export interface SignedFields {
  raw: string;
  hash: string;
  nonce?: bigint | null | undefined;
  validUntilHeight?: bigint | null | undefined;
}

type SignedRow = { id: string; raw_tx: string; tx_hash: string; nonce: string | null; valid_until_height: string | null; tx_hashes: string[] | string; age_ms: string | number };

const toSignedTx = (row: SignedRow): SignedTx => ({
  raw: row.raw_tx,
  hash: row.tx_hash,
  nonce: row.nonce === null ? null : BigInt(row.nonce),
  validUntilHeight: row.valid_until_height === null ? null : BigInt(row.valid_until_height),
  hashes: parseTextArray(row.tx_hashes),
  ageMs: Number(row.age_ms),
});

/** The signed transactions of the jobs that hold one, by job id, in one read; their ages at `now` (`decisionTime`). */
export async function readSignedTxs(db: Db, jobIds: readonly string[], now?: number): Promise<Map<string, SignedTx>> {
  if (jobIds.length === 0) return new Map();
  const { rows } = await sql<SignedRow>`
    select id::text as id, raw_tx, tx_hash, nonce, valid_until_height, tx_hashes,
      coalesce(extract(epoch from (${decisionTime(now)} - signed_at)) * 1000, 0)::bigint as age_ms
    from relayer_jobs where id in (select unnest(${jobIds.map(String)}::bigint[])) and raw_tx <> ''
  `.execute(db);
  return new Map(rows.map((row) => [String(row.id), toSignedTx(row)]));
}

/**
 * Records a signed transaction before it is broadcast. False when the worker no longer holds the job:
 * then it must not be sent.
 */
export async function saveSignedTx(
  db: Db,
  job: RelayerJob,
  worker: string,
  tx: SignedFields,
): Promise<boolean> {
  const result = await sql`
    update relayer_jobs set raw_tx = ${tx.raw}, tx_hash = ${tx.hash}, nonce = ${tx.nonce?.toString() ?? null}::bigint,
      valid_until_height = ${tx.validUntilHeight?.toString() ?? null}::bigint,
      tx_hashes = array_append(tx_hashes, ${tx.hash}::text), signed_at = now(), updated_at = now()
    where id = ${job.id} and locked_by = ${worker}
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/**
 * `saveSignedTx` for many jobs in one statement; returns the ids of the jobs the worker still held,
 * whose transactions were recorded (only those may be sent).
 */
export async function saveSignedTxs(
  db: Db,
  worker: string,
  txs: ReadonlyArray<SignedFields & { jobId: string }>,
): Promise<Set<string>> {
  if (txs.length === 0) return new Set();
  const values = sql.join(
    txs.map((t) => sql`(${t.jobId}::bigint, ${t.raw}::text, ${t.hash}::text, ${t.nonce?.toString() ?? null}::bigint, ${t.validUntilHeight?.toString() ?? null}::bigint)`),
  );
  const { rows } = await sql<{ id: string }>`
    update relayer_jobs j set raw_tx = v.raw, tx_hash = v.hash, nonce = v.nonce, valid_until_height = v.height,
      tx_hashes = array_append(j.tx_hashes, v.hash), signed_at = now(), updated_at = now()
    from (values ${values}) as v(id, raw, hash, nonce, height)
    where j.id = v.id and j.locked_by = ${worker}
    returning j.id::text as id
  `.execute(db);
  return new Set(rows.map((r) => String(r.id)));
}

/**
 * Forgets the signed transaction, so the job signs afresh with a new nonce. Only once no transaction
 * of the job can be mined any more: the node refused it, or its nonce went to another transaction.
 */
export async function clearSignedTx(db: Db, jobId: string, worker: string): Promise<void> {
  await sql`
    update relayer_jobs set raw_tx = '', nonce = null, valid_until_height = null, signed_at = null, updated_at = now()
    where id = ${jobId} and locked_by = ${worker}
  `.execute(db);
}

/** The mined transaction settled the job: confirmed, with the hash that was mined (maybe a fee bump's). */
export async function confirmJob(db: Db, jobId: string, worker: string, hash: string): Promise<void> {
  await confirmJobs(db, worker, [{ id: jobId, hash }]);
}

/** `confirmJob` for many jobs in one statement: a block's worth of landed transactions at once. */
export async function confirmJobs(db: Db, worker: string, jobs: ReadonlyArray<{ id: string; hash: string }>): Promise<void> {
  if (jobs.length === 0) return;
  const values = sql.join(jobs.map((j) => sql`(${j.id}::bigint, ${j.hash}::text)`));
  await sql`
    update relayer_jobs r set status = 'confirmed', tx_hash = v.hash, locked_by = null, locked_until = null, updated_at = now()
    from (values ${values}) as v(id, hash)
    where r.id = v.id and r.locked_by = ${worker}
  `.execute(db);
}

/**
 * Fails a job for good, whatever its attempts: its transaction was mined and reverted, so sending
 * again would be a second transaction for one job.
 */
export async function failJob(db: Db, jobId: string, worker: string, error: string, hash?: string): Promise<void> {
  await sql`
    update relayer_jobs set status = 'failed', last_error = ${error.slice(0, 2000)},
      tx_hash = coalesce(${hash ?? null}::text, tx_hash), raw_tx = '', locked_by = null, locked_until = null,
      updated_at = now()
    where id = ${jobId} and locked_by = ${worker}
  `.execute(db);
}

/**
 * The lowest nonce above every nonce the chain's jobs hold signed and unsettled: a job signed before a
 * crash keeps its nonce, and the next job must not take it.
 */
export async function nextUnusedNonce(db: Db, chain: string, signer: JobSigner = 'relayer'): Promise<bigint | undefined> {
  const { rows } = await sql<{ n: string | null }>`${prepared}
    select max(nonce) as n from relayer_jobs
    where chain = ${chain} and signer = ${signer} and raw_tx <> '' and status in ('queued', 'running', 'submitted')
  `.execute(db);
  const n = rows[0]?.n;
  return n === null || n === undefined ? undefined : BigInt(n) + 1n;
}

/**
 * A failed job asked for again is queued again with fresh attempts (the client may have fixed the
 * cause, e.g. approved the HTLC). A failed job has no transaction that can still be mined, so this
 * cannot make a second one: a reverted job's transaction is settled, and a job that failed before
 * broadcasting never had one. The conditional update lets one of concurrent callers do it.
 */
export async function requeueFailedJob(db: Db, idempotencyKey: string, broadcastBy?: Date): Promise<boolean> {
  const result = await sql`
    update relayer_jobs set status = 'queued', attempts = 0, raw_tx = '', nonce = null, valid_until_height = null, signed_at = null, deferrals = 0, refused_at_height = null,
      broadcast_by = coalesce(${broadcastBy ?? null}::timestamptz, broadcast_by), cancelled_at = null, run_after = now(), updated_at = now()
    where idempotency_key = ${idempotencyKey} and status = 'failed'
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/**
 * `requeueFailedJob` with a new payload: the client sent a new transaction to relay (its first one
 * expired or was refused). The failed job's own transaction can no longer land.
 */
export async function requeueFailedJobWith(db: Db, idempotencyKey: string, payload: unknown): Promise<boolean> {
  const result = await sql`
    update relayer_jobs set status = 'queued', attempts = 0, raw_tx = '', nonce = null, valid_until_height = null, signed_at = null,
      payload = ${JSON.stringify(payload)}::jsonb, last_error = '', refused_at_height = null, run_after = now(), updated_at = now()
    where idempotency_key = ${idempotencyKey} and status = 'failed'
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/** `{a,b}` as PGlite may return an array column as text; pg returns it parsed. */
function parseTextArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((s) => s.replace(/^"|"$/g, ''));
}
