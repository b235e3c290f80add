import { sql } from 'kysely';
import type { Db } from './database.ts';
import { decisionTime } from './decision-time.ts';
import { prepared } from './prepared.ts';
import type { JobSigner, JobStatus } from './schema.ts';

/**
 * Whether a job was written with its signed transaction, which the engine only broadcasts (payload
 * kind `signed`, migration 0010; a family whose transactions are complete once signed writes its jobs
 * so): its transaction and hash are fixed from the start.
 */
export const isWrittenSigned = (job: Pick<RelayerJob, 'payload'>): boolean => (job.payload as { kind?: unknown } | null)?.kind === 'signed';

export interface RelayerJob {
  id: string;
  chain: string;
  orderId: string | null;
  action: string;
  idempotencyKey: string;
  signer: JobSigner;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  txHash: string;
  nonce: string | null;
  lastError: string;
}

export interface NewJob {
  chain: string;
  orderId?: string;
  action: string;
  /** One job per key: the same order and action always map to the same key. */
  idempotencyKey: string;
  payload: unknown;
  /** The account that signs it (default the relayer). */
  signer?: JobSigner;
  maxAttempts?: number;
  /** The latest moment the job may first reach the chain (safety rule 2 for a funding); the engine never sends it later. */
  broadcastBy?: Date;
}

type JobRow = {
  id: string;
  chain: string;
  order_id: string | null;
  action: string;
  idempotency_key: string;
  signer: JobSigner;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  tx_hash: string;
  nonce: string | null;
  last_error: string;
};

const JOB_COLUMNS = [
  'id',
  'chain',
  'order_id',
  'action',
  'idempotency_key',
  'signer',
  'payload',
  'status',
  'attempts',
  'tx_hash',
  'nonce',
  'last_error',
] as const;

function toJob(r: JobRow): RelayerJob {
  return {
    id: r.id,
    chain: r.chain,
    orderId: r.order_id,
    action: r.action,
    idempotencyKey: r.idempotency_key,
    signer: r.signer,
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    status: r.status,
    attempts: r.attempts,
    txHash: r.tx_hash,
    nonce: r.nonce,
    lastError: r.last_error,
  };
}

/**
 * Adds a job, or returns the existing one with the same idempotency key (`created` says which).
 * Safe under concurrency: the unique key lets exactly one insert win.
 */
export async function enqueueJob(db: Db, job: NewJob): Promise<{ job: RelayerJob; created: boolean }> {
  const inserted = await db
    .insertInto('relayer_jobs')
    .values({
      chain: job.chain,
      order_id: job.orderId ?? null,
      action: job.action,
      idempotency_key: job.idempotencyKey,
      payload: JSON.stringify(job.payload),
      ...(job.signer ? { signer: job.signer } : {}),
      ...(job.maxAttempts !== undefined ? { max_attempts: job.maxAttempts } : {}),
      ...(job.broadcastBy ? { broadcast_by: job.broadcastBy } : {}),
    })
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .returning(JOB_COLUMNS)
    .executeTakeFirst();
  if (inserted) return { job: toJob(inserted), created: true };
  const existing = await db
    .selectFrom('relayer_jobs')
    .select(JOB_COLUMNS)
    .where('idempotency_key', '=', job.idempotencyKey)
    .executeTakeFirstOrThrow();
  return { job: toJob(existing), created: false };
}

/**
 * A claimed job: whether it holds a signed transaction (one to follow up, not to sign), the latest
 * moment it may first reach the chain (epoch ms, or null), and whether the engine cancelled it.
 */
export type ClaimedJob = RelayerJob & { hasTx: boolean; broadcastBy: number | null; cancelled: boolean };

/** Adds many jobs in one statement; returns the keys of those created (a key already queued keeps its job). */
export async function enqueueJobs(db: Db, jobs: readonly NewJob[]): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const rows = await db
    .insertInto('relayer_jobs')
    .values(
      jobs.map((job) => ({
        chain: job.chain,
        order_id: job.orderId ?? null,
        action: job.action,
        idempotency_key: job.idempotencyKey,
        payload: JSON.stringify(job.payload),
        signer: job.signer ?? 'relayer',
        ...(job.maxAttempts !== undefined ? { max_attempts: job.maxAttempts } : {}),
        broadcast_by: job.broadcastBy ?? null,
      })),
    )
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .returning('idempotency_key')
    .execute();
  return new Set(rows.map((r) => r.idempotency_key));
}

/** A claim, and what it saw of the jobs it left: when the engine's loop has to look again. */
export interface Claim {
  jobs: ClaimedJob[];
  /** Whether the chain and signer have any unsettled job (queued, running or submitted), of either kind. */
  pending: boolean;
  /** Milliseconds until the earliest queued or submitted job of the kind asked for falls due (<= 0: due now), or null when none is waiting. */
  nextDueInMs: number | null;
}

/**
 * Takes up to `limit` due jobs of a chain and signer for `worker`, oldest first, locking them for
 * `leaseMs`. Jobs another worker holds are skipped; a job whose lease ran out (its worker died) is due again.
 * With `newFirst`, jobs without a transaction come before those with one to check, so a batch full of
 * rechecks never delays a new job; `withTx` takes only the jobs with (true) or without (false) one.
 */
export async function claimJobs(
  db: Db,
  input: { chain: string; signer?: JobSigner; worker: string; leaseMs: number; limit: number; newFirst?: boolean; withTx?: boolean; now?: number },
): Promise<ClaimedJob[]> {
  return (await claimJobsAndNext(db, input)).jobs;
}

/**
 * `claimJobs`, and in the same statement whether any job is left unsettled and when the next one falls
 * due: an idle engine's loop sleeps on it instead of claiming again and again. Both read the jobs as
 * they were before this claim took any (the snapshot of the statement).
 */
export async function claimJobsAndNext(
  db: Db,
  input: { chain: string; signer?: JobSigner; worker: string; leaseMs: number; limit: number; newFirst?: boolean; withTx?: boolean; now?: number },
): Promise<Claim> {
  const signer = input.signer ?? 'relayer';
  const hasTx = sql`(raw_tx <> '')`;
  const order = input.newFirst ? sql`${hasTx}, id` : sql`id`;
  const which = input.withTx === undefined ? sql`` : input.withTx ? sql`and ${hasTx}` : sql`and not ${hasTx}`;
  const rows = await sql<
    { [K in keyof JobRow]: JobRow[K] | null } & { has_tx: boolean | null; broadcast_by_ms: string | null; cancelled: boolean | null; pending: boolean; next_due_ms: number | null }
  >`${prepared}
    with claimed as (
      update relayer_jobs set
        status = 'running',
        -- Coming back to check a submitted transaction is not a new attempt.
        attempts = attempts + case when status = 'submitted' then 0 else 1 end,
        locked_by = ${input.worker},
        locked_until = now() + ${`${input.leaseMs} milliseconds`}::interval,
        updated_at = now()
      where id in (
        select id from relayer_jobs
        where chain = ${input.chain} and signer = ${signer} and run_after <= ${decisionTime(input.now)}
          and (status in ('queued', 'submitted') or (status = 'running' and locked_until < now())) ${which}
          and (refused_at_height is null or status <> 'queued'
            or refused_at_height < coalesce((select h.height from chain_heights h where h.chain = relayer_jobs.chain), refused_at_height + 1)
            or run_after <= ${decisionTime(input.now)} - ${`${RESIMULATE_WITHOUT_BLOCK_MS} milliseconds`}::interval)
        order by ${order}
        limit ${input.limit}
        for update skip locked
      )
      returning ${sql.raw(JOB_COLUMNS.join(', '))}, (raw_tx <> '') as has_tx,
        (extract(epoch from broadcast_by) * 1000)::bigint as broadcast_by_ms, cancelled_at is not null as cancelled
    )
    select claimed.*, left_over.* from (
      select
        exists (
          select 1 from relayer_jobs where chain = ${input.chain} and signer = ${signer} and status in ('queued', 'running', 'submitted')
        ) as pending,
        (extract(epoch from (
          select min(run_after) from relayer_jobs
          where chain = ${input.chain} and signer = ${signer} and status in ('queued', 'submitted') ${which}
        ) - ${decisionTime(input.now)}) * 1000)::float8 as next_due_ms
    ) left_over left join claimed on true
  `.execute(db);
  const first = rows.rows[0];
  const jobs = rows.rows
    .filter((r): r is typeof r & JobRow => r.id !== null)
    .map((r) => ({ ...toJob(r), hasTx: r.has_tx === true, broadcastBy: r.broadcast_by_ms === null ? null : Number(r.broadcast_by_ms), cancelled: r.cancelled === true }))
    .sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  return { jobs, pending: first?.pending === true, nextDueInMs: first?.next_due_ms ?? null };
}

/** The transaction is out; the job comes back after `recheckMs` to check its receipt. */
export async function markSubmitted(
  db: Db,
  id: string,
  input: { worker: string; txHash: string; nonce?: bigint; recheckMs: number; now?: number },
): Promise<void> {
  await db
    .updateTable('relayer_jobs')
    .set({
      status: 'submitted',
      tx_hash: input.txHash,
      deferrals: 0,
      ...(input.nonce !== undefined ? { nonce: input.nonce } : {}),
      locked_by: null,
      locked_until: null,
      run_after: sql`${decisionTime(input.now)} + ${`${input.recheckMs} milliseconds`}::interval`,
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('locked_by', '=', input.worker)
    .execute();
}

/** `markSubmitted` for many jobs in one statement. */
export async function markSubmittedMany(
  db: Db,
  worker: string,
  jobs: ReadonlyArray<{ id: string; txHash: string }>,
  recheckMs: number,
  now?: number,
): Promise<void> {
  if (jobs.length === 0) return;
  const values = sql.join(jobs.map((j) => sql`(${j.id}::bigint, ${j.txHash}::text)`));
  await sql`
    update relayer_jobs r set status = 'submitted', tx_hash = v.hash, deferrals = 0, locked_by = null, locked_until = null,
      run_after = ${decisionTime(now)} + ${`${recheckMs} milliseconds`}::interval, updated_at = now()
    from (values ${values}) as v(id, hash)
    where r.id = v.id and r.locked_by = ${worker}
  `.execute(db);
}

/**
 * How long a job whose simulation reverted waits for a new block before it is simulated again anyway
 * (the watcher that records the chain's height may be away).
 */
export const RESIMULATE_WITHOUT_BLOCK_MS = 60_000;

/**
 * Records a failed attempt: the job is retried after `retryMs`, or fails for good past its attempts.
 * A reverted simulation (`untilNewBlock`) is retried once the chain's recorded height passes the one
 * it reverted at, or `RESIMULATE_WITHOUT_BLOCK_MS` later: on the same state it reverts again.
 */
export async function markAttemptFailed(
  db: Db,
  id: string,
  input: { worker: string; error: string; retryMs: number; now?: number; untilNewBlock?: boolean },
): Promise<JobStatus> {
  const row = await db
    .updateTable('relayer_jobs')
    .set((eb) => ({
      status: eb
        .case()
        .when('attempts', '>=', eb.ref('max_attempts'))
        .then(sql<JobStatus>`'failed'`)
        .else(sql<JobStatus>`'queued'`)
        .end(),
      last_error: input.error.slice(0, 2000),
      deferrals: 0,
      refused_at_height: input.untilNewBlock ? sql<string>`(select h.height from chain_heights h where h.chain = relayer_jobs.chain)` : null,
      locked_by: null,
      locked_until: null,
      run_after: sql`${decisionTime(input.now)} + ${`${input.retryMs} milliseconds`}::interval`,
      updated_at: new Date(),
    }))
    .where('id', '=', id)
    .where('locked_by', '=', input.worker)
    .returning('status')
    .executeTakeFirst();
  return row?.status ?? 'failed';
}

/**
 * Gives a job back to the queue without using up an attempt: the attempt could not be made (the
 * chain's node was unreachable), which says nothing about the job itself. It comes back after
 * `retryMs`, doubled for each deferral in a row, at most `maxRetryMs`. A signed transaction it holds
 * stays: it may be out, and it is followed up when the node answers.
 */
export async function deferJob(db: Db, id: string, input: { worker: string; error: string; retryMs: number; maxRetryMs?: number; now?: number }): Promise<void> {
  const max = input.maxRetryMs ?? input.retryMs;
  await sql`
    update relayer_jobs set status = 'queued', attempts = greatest(attempts - 1, 0),
      last_error = ${input.error.slice(0, 2000)}, deferrals = deferrals + 1, locked_by = null, locked_until = null,
      run_after = ${decisionTime(input.now)} + least(${input.retryMs}::float8 * power(2, least(deferrals, 30)), ${max}::float8) * interval '1 millisecond',
      updated_at = now()
    where id = ${id} and locked_by = ${input.worker}
  `.execute(db);
}

/** Marks a job cancelled: past its `broadcast_by`, a transaction that takes its place was signed (and is stored as its current one). */
export async function markCancelled(db: Db, id: string, worker: string): Promise<void> {
  await sql`update relayer_jobs set cancelled_at = coalesce(cancelled_at, now()), updated_at = now() where id = ${id} and locked_by = ${worker}`.execute(db);
}

/**
 * Puts a claimed job back in the queue, due now, for another pass to take it (its transaction was
 * cleared and it must be signed again). That pass's claim does not count as a new attempt.
 */
export async function requeueJob(db: Db, id: string, worker: string): Promise<void> {
  await sql`
    update relayer_jobs set status = 'queued', attempts = greatest(attempts - 1, 0), locked_by = null, locked_until = null,
      run_after = now(), updated_at = now()
    where id = ${id} and locked_by = ${worker}
  `.execute(db);
}

export interface JobQueueStat {
  chain: string;
  status: JobStatus;
  jobs: number;
  /** Age of the oldest of them, in seconds. */
  oldestSeconds: number;
  /** How many of them could not reach their node on their last pass. */
  waiting: number;
}

/** The unsettled jobs of every chain, by state: what the engine's metrics show (one query). */
export async function jobQueueStats(db: Db): Promise<JobQueueStat[]> {
  const { rows } = await sql<{ chain: string; status: JobStatus; jobs: number; oldest_s: number; waiting: number }>`
    select chain, status, count(*)::int as jobs, extract(epoch from now() - min(created_at))::float8 as oldest_s,
      count(*) filter (where deferrals > 0)::int as waiting
    from relayer_jobs where status in ('queued', 'running', 'submitted') group by chain, status
  `.execute(db);
  return rows.map((r) => ({ chain: r.chain, status: r.status, jobs: r.jobs, oldestSeconds: Number(r.oldest_s), waiting: r.waiting }));
}

/** The jobs of these idempotency keys, in one statement (those that exist). */
export async function findJobs(db: Db, idempotencyKeys: readonly string[]): Promise<RelayerJob[]> {
  if (idempotencyKeys.length === 0) return [];
  const rows = await db.selectFrom('relayer_jobs').select(JOB_COLUMNS).where('idempotency_key', 'in', idempotencyKeys).execute();
  return rows.map(toJob);
}

export async function findJob(db: Db, idempotencyKey: string): Promise<RelayerJob | undefined> {
  const row = await db
    .selectFrom('relayer_jobs')
    .select(JOB_COLUMNS)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
  return row && toJob(row);
}
