import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { decisionTime } from './decision-time.ts';
import type { WebhookDeliveryStatus } from './schema.ts';

export interface WebhookEndpoint {
  id: string;
  appId: string;
  url: string;
  /** Empty: every status. */
  statuses: string[];
  createdAt: string;
  disabledAt: string | null;
  disabledReason: string;
  consecutiveFailures: number;
}

/** A delivery as the app's delivery log shows it. */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string;
  createdAt: string;
  deliveredAt: string | null;
  attemptLog: Array<{ attempt: number; startedAt: string; durationMs: number; statusCode: number | null; error: string }>;
}

/** A delivery a worker has claimed, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  body: string;
  /** This attempt's number, from 1. */
  attempt: number;
  url: string;
  secretCiphertext: Uint8Array;
}

/** One outbox row to write: the event's id, app and status pick the endpoints. */
export interface OutboxEvent {
  eventId: string;
  appId: string;
  status: string;
  body: string;
}

/** A duration in SQL, as an interval of whole milliseconds. */
const ms = (n: number) => sql`${`${Math.max(0, Math.round(n))} milliseconds`}::interval`;

/** The channel a queued delivery notifies (at commit), so that workers need not wait for their poll. */
export const WEBHOOK_QUEUED_CHANNEL = 'webhook_queued';

const ENDPOINT_COLUMNS = [
  'id',
  'app_id',
  'url',
  'statuses',
  'created_at',
  'disabled_at',
  'disabled_reason',
  'consecutive_failures',
] as const;

type EndpointRow = {
  id: string;
  app_id: string;
  url: string;
  statuses: string[] | null;
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string;
  consecutive_failures: number;
};

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    appId: r.app_id,
    url: r.url,
    statuses: r.statuses ?? [],
    createdAt: r.created_at,
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason,
    consecutiveFailures: r.consecutive_failures,
  };
}

export const newEndpointId = (): string => `wh_${randomBytes(12).toString('hex')}`;

/**
 * Registers an endpoint, unless the app already has `maxPerApp` (then undefined). The count and the
 * insert are one statement.
 */
export async function insertEndpoint(
  db: Db,
  input: { appId: string; url: string; statuses: readonly string[]; secretCiphertext: Uint8Array; maxPerApp: number },
): Promise<WebhookEndpoint | undefined> {
  const statuses = input.statuses.length === 0 ? null : [...input.statuses];
  const row = await sql<EndpointRow>`
    insert into webhook_endpoints (id, app_id, url, statuses, secret_ciphertext)
    select ${newEndpointId()}, ${input.appId}, ${input.url}, ${statuses}::text[], ${input.secretCiphertext}
    where (select count(*) from webhook_endpoints where app_id = ${input.appId}) < ${input.maxPerApp}
    returning ${sql.raw(ENDPOINT_COLUMNS.join(', '))}
  `.execute(db);
  return row.rows[0] && toEndpoint(row.rows[0]);
}

export async function listEndpoints(db: Db, appId: string): Promise<WebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('app_id', '=', appId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toEndpoint);
}

/** The endpoint, if it exists and (with `appId`) belongs to that app. */
export async function findEndpoint(db: Db, id: string, appId?: string): Promise<WebhookEndpoint | undefined> {
  let query = db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('id', '=', id);
  if (appId !== undefined) query = query.where('app_id', '=', appId);
  const row = await query.executeTakeFirst();
  return row && toEndpoint(row);
}

/** Removes the endpoint and its delivery log; false when there is none (of that app). */
export async function deleteEndpoint(db: Db, id: string, appId?: string): Promise<boolean> {
  let query = db.deleteFrom('webhook_endpoints').where('id', '=', id);
  if (appId !== undefined) query = query.where('app_id', '=', appId);
  const result = await query.executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Enables a disabled endpoint again with a clean failure record; undefined when there is none (of that app). */
export async function enableEndpoint(db: Db, id: string, appId: string): Promise<WebhookEndpoint | undefined> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ disabled_at: null, disabled_reason: '', consecutive_failures: 0, failing_since: null })
    .where('id', '=', id)
    .where('app_id', '=', appId)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
  return row && toEndpoint(row);
}

/**
 * Writes one pending delivery per event and active endpoint of its app subscribed to its status, in
 * one statement whatever the number of events, and notifies `webhook_queued` (at commit) when any
 * was written. An event already queued for an endpoint is left as it is.
 */
export async function insertDeliveries(db: Db, events: readonly OutboxEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const result = await sql<{ queued: number }>`
    with ev as (
      select * from unnest(${events.map((e) => e.eventId)}::bigint[], ${events.map((e) => e.appId)}::text[],
        ${events.map((e) => e.status)}::text[], ${events.map((e) => e.body)}::text[]) as ev(id, app_id, status, body)
    ), queued as (
      insert into webhook_deliveries (endpoint_id, event_id, body)
      select e.id, ev.id, ev.body
      from ev join webhook_endpoints e on e.app_id = ev.app_id
      where e.disabled_at is null and (e.statuses is null or ev.status = any (e.statuses))
      order by ev.id, e.id
      on conflict (endpoint_id, event_id) do nothing
      returning 1
    )
    select count(*)::int as queued, pg_notify(${WEBHOOK_QUEUED_CHANNEL}, count(*)::text) from queued having count(*) > 0
  `.execute(db);
  return result.rows[0]?.queued ?? 0;
}

/**
 * Takes up to `limit` due deliveries for `worker`, locking each for `leaseMs`: the oldest due first,
 * skipping rows another worker holds or is claiming (SKIP LOCKED), and never more than `perEndpoint`
 * leased at once for one endpoint (counting every worker's leases), so a slow endpoint's backlog
 * cannot take every slot. A delivery whose lease ran out (its worker died) is due again.
 */
export async function claimDeliveries(
  db: Db,
  input: { worker: string; leaseMs: number; limit: number; perEndpoint: number; now?: number },
): Promise<ClaimedDelivery[]> {
  const rows = await sql<{
    id: string;
    endpoint_id: string;
    event_id: string;
    body: string;
    attempts: number;
    url: string;
    secret_ciphertext: Uint8Array;
  }>`
    with busy as (
      select endpoint_id, count(*)::int as n from webhook_deliveries
      where locked_until is not null and locked_until > now() and status = 'pending'
      group by endpoint_id
    ), candidates as (
      select d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
      join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and d.next_attempt_at <= ${decisionTime(input.now)}
        and (d.locked_until is null or d.locked_until < now())
        and e.disabled_at is null
        and d.endpoint_id not in (select endpoint_id from busy where n >= ${input.perEndpoint})
      order by d.next_attempt_at, d.id
      limit ${input.limit * 4}
      for update of d skip locked
    ), picked as (
      select id from (
        select c.id, c.next_attempt_at,
          row_number() over (partition by c.endpoint_id order by c.next_attempt_at, c.id) + coalesce(b.n, 0) as slot
        from candidates c left join busy b on b.endpoint_id = c.endpoint_id
      ) ranked
      where slot <= ${input.perEndpoint}
      order by next_attempt_at, id
      limit ${input.limit}
    )
    update webhook_deliveries d set attempts = d.attempts + 1, locked_by = ${input.worker},
      locked_until = now() + ${ms(input.leaseMs)}, updated_at = now()
    from picked, webhook_endpoints e
    where d.id = picked.id and e.id = d.endpoint_id
    returning d.id, d.endpoint_id, d.event_id, d.body, d.attempts, e.url, e.secret_ciphertext
  `.execute(db);
  return rows.rows
    .map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      body: r.body,
      attempt: r.attempts,
      url: r.url,
      secretCiphertext: r.secret_ciphertext,
    }))
    .sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
}

/** What one attempt came to, for the attempt log. */
export interface AttemptOutcome {
  startedAt: Date;
  durationMs: number;
  /** The HTTP status, or null when no answer came (timeout, refused connection). */
  statusCode: number | null;
  error: string;
}

/**
 * The endpoint answered 2xx: the delivery is done, and the endpoint's failure record is cleared.
 * False when `worker` no longer held it (its lease ran out and another worker took it).
 */
export async function markDelivered(db: Db, id: string, worker: string, outcome: AttemptOutcome): Promise<boolean> {
  const result = await sql<{ n: number }>`
    with d as (
      update webhook_deliveries set status = 'delivered', delivered_at = now(), last_status_code = ${outcome.statusCode},
        last_error = '', locked_by = null, locked_until = null, updated_at = now()
      where id = ${id} and locked_by = ${worker} and status = 'pending'
      returning id, endpoint_id, attempts
    ), logged as (
      insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
      select id, attempts, ${outcome.startedAt}, ${Math.round(outcome.durationMs)}, ${outcome.statusCode} from d
    ), cleared as (
      update webhook_endpoints set consecutive_failures = 0, failing_since = null where id in (select endpoint_id from d)
    )
    select count(*)::int as n from d
  `.execute(db);
  return (result.rows[0]?.n ?? 0) > 0;
}

export interface FailurePolicy {
  /** When the next attempt is due. */
  retryMs: number;
  /** A delivery whose next attempt would come later than this after it was queued fails for good. */
  giveUpMs: number;
  /** An endpoint with no success for this long since its first failure is disabled. */
  disableAfterMs: number;
}

/**
 * The attempt failed: the delivery is due again after `retryMs`, or fails for good past `giveUpMs`;
 * the endpoint counts the failure and is disabled once it has failed for `disableAfterMs` without a
 * success. Returns the delivery's status and whether this failure disabled the endpoint (undefined
 * when `worker` no longer held the delivery).
 */
export async function markFailed(
  db: Db,
  id: string,
  worker: string,
  outcome: AttemptOutcome,
  policy: FailurePolicy,
  now?: number,
): Promise<{ status: WebhookDeliveryStatus; disabled: boolean; endpointId: string } | undefined> {
  const error = outcome.error.slice(0, 500);
  const at = decisionTime(now);
  const result = await sql<{ status: WebhookDeliveryStatus; disabled: boolean; endpoint_id: string }>`
    with d as (
      update webhook_deliveries set
        status = case when created_at + ${ms(policy.giveUpMs)} < ${at} + ${ms(policy.retryMs)} then 'failed' else 'pending' end,
        next_attempt_at = ${at} + ${ms(policy.retryMs)}, last_status_code = ${outcome.statusCode}, last_error = ${error},
        locked_by = null, locked_until = null, updated_at = now()
      where id = ${id} and locked_by = ${worker} and status = 'pending'
      returning id, endpoint_id, attempts, status
    ), logged as (
      insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error)
      select id, attempts, ${outcome.startedAt}, ${Math.round(outcome.durationMs)}, ${outcome.statusCode}, ${error} from d
    ), e as (
      update webhook_endpoints w set
        consecutive_failures = w.consecutive_failures + 1,
        failing_since = coalesce(w.failing_since, ${at}),
        disabled_at = case when w.disabled_at is null and w.failing_since <= ${at} - ${ms(policy.disableAfterMs)} then ${at} else w.disabled_at end,
        disabled_reason = case when w.disabled_at is null and w.failing_since <= ${at} - ${ms(policy.disableAfterMs)}
          then 'no successful delivery since ' || to_char(w.failing_since, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' ('
            || (w.consecutive_failures + 1) || ' failed attempts in a row; the last: ' || ${error} || ')'
          else w.disabled_reason end
      from d where w.id = d.endpoint_id
      returning w.id, w.disabled_at = ${at} as newly_disabled
    )
    select d.status, coalesce(e.newly_disabled, false) as disabled, d.endpoint_id from d left join e on e.id = d.endpoint_id
  `.execute(db);
  const row = result.rows[0];
  return row && { status: row.status, disabled: row.disabled, endpointId: row.endpoint_id };
}

/** A disabled endpoint's pending deliveries stop (failed, naming why); returns how many. */
export async function stopPendingDeliveries(db: Db, endpointId: string, reason: string): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: reason.slice(0, 500), locked_by: null, locked_until: null, updated_at: new Date() })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Gives a claimed delivery back, due at once and without using up an attempt: the attempt was not
 * completed (the worker is stopping), which says nothing about the endpoint.
 */
export async function releaseDelivery(db: Db, id: string, worker: string): Promise<void> {
  await sql`
    update webhook_deliveries set attempts = greatest(attempts - 1, 0), locked_by = null, locked_until = null,
      next_attempt_at = now(), updated_at = now()
    where id = ${id} and locked_by = ${worker} and status = 'pending'
  `.execute(db);
}

/**
 * Deletes deliveries that ended (delivered or failed) more than `keepMs` ago, with their attempts,
 * at most `batch` at a time so no one statement holds many rows; returns how many went.
 */
export async function pruneDeliveries(db: Db, keepMs: number, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries
        where status <> 'pending' and updated_at < now() - ${ms(keepMs)}
        limit ${batch}
      )
    `.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0n);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** One page of an endpoint's deliveries, newest first, with each one's attempts, and the total. */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  page: { page: number; perPage: number },
): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
  const [deliveries, count] = await Promise.all([
    readDeliveries(db, endpointId, page),
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirstOrThrow(),
  ]);
  return { total: Number(count.n), deliveries };
}

/** One delivery of the endpoint, as its log shows it; undefined when it has no such delivery. */
export async function findDelivery(db: Db, endpointId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
  const [delivery] = await readDeliveries(db, endpointId, { id: deliveryId });
  return delivery;
}

/** The endpoint's delivery of that id, or one page of its deliveries (newest first), with their attempts. */
async function readDeliveries(db: Db, endpointId: string, only: { id: string } | { page: number; perPage: number }): Promise<WebhookDelivery[]> {
  const query = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id', 'status', 'attempts', 'next_attempt_at', 'last_status_code', 'last_error', 'created_at', 'delivered_at'])
    .where('endpoint_id', '=', endpointId);
  const rows = await ('id' in only ? query.where('id', '=', only.id) : query.orderBy('id', 'desc').limit(only.perPage).offset((only.page - 1) * only.perPage)).execute();
  const attempts =
    rows.length === 0
      ? []
      : await db
          .selectFrom('webhook_attempts')
          .select(['delivery_id', 'attempt', 'started_at', 'duration_ms', 'status_code', 'error'])
          .where(
            'delivery_id',
            'in',
            rows.map((r) => r.id),
          )
          .orderBy('id')
          .execute();
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    attemptLog: attempts
      .filter((a) => a.delivery_id === r.id)
      .map((a) => ({ attempt: a.attempt, startedAt: a.started_at, durationMs: a.duration_ms, statusCode: a.status_code, error: a.error })),
  }));
}

/**
 * Sends an ended delivery (delivered, given up, or stopped when its endpoint was disabled) again,
 * due now, and wakes the workers. It is then retried like any delivery until `giveUpMs` after its
 * event, so an older one gets one attempt. Says why not otherwise: no such delivery of the endpoint,
 * still pending, or the endpoint disabled.
 */
export async function redeliver(db: Db, endpointId: string, deliveryId: string): Promise<'queued' | 'unknown' | 'pending' | 'disabled'> {
  const result = await sql<{ queued: number }>`
    with d as (
      update webhook_deliveries d set status = 'pending', next_attempt_at = now(), locked_by = null, locked_until = null, updated_at = now()
      from webhook_endpoints e
      where d.id = ${deliveryId} and d.endpoint_id = ${endpointId} and d.status <> 'pending'
        and e.id = d.endpoint_id and e.disabled_at is null
      returning d.id
    )
    select count(*)::int as queued, pg_notify(${WEBHOOK_QUEUED_CHANNEL}, count(*)::text) from d having count(*) > 0
  `.execute(db);
  if (result.rows.length > 0) return 'queued';
  // Not queued: the delivery is missing, still pending, or else ended on a disabled endpoint.
  const row = await db.selectFrom('webhook_deliveries').select('status').where('id', '=', deliveryId).where('endpoint_id', '=', endpointId).executeTakeFirst();
  if (!row) return 'unknown';
  return row.status === 'pending' ? 'pending' : 'disabled';
}
