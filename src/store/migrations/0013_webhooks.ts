import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Webhooks: the endpoints apps register, and the outbox of deliveries (one per event and endpoint,
 * written in the transaction that records the event). Workers on every instance claim due deliveries
 * with FOR UPDATE SKIP LOCKED and a lease (`locked_by`, `locked_until`); `webhook_attempts` keeps
 * each attempt's outcome for the app's delivery log.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table webhook_endpoints (
      id text primary key,
      app_id text not null references apps (id),
      url text not null,
      -- null: every status
      statuses text[],
      secret_ciphertext bytea not null,
      created_at timestamptz not null default now(),
      disabled_at timestamptz,
      disabled_reason text not null default '',
      consecutive_failures integer not null default 0,
      -- The first failed attempt since the last success: an endpoint failing for long enough is disabled.
      failing_since timestamptz
    );
    create index webhook_endpoints_app on webhook_endpoints (app_id, created_at);

    create table webhook_deliveries (
      id bigserial primary key,
      endpoint_id text not null references webhook_endpoints (id) on delete cascade,
      event_id bigint not null references order_events (id),
      body text not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      locked_by text,
      locked_until timestamptz,
      last_status_code integer,
      last_error text not null default '',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      delivered_at timestamptz,
      unique (endpoint_id, event_id)
    );
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at, id) where status = 'pending';
    create index webhook_deliveries_leased on webhook_deliveries (endpoint_id) where locked_until is not null;
    create index webhook_deliveries_log on webhook_deliveries (endpoint_id, id);

    create table webhook_attempts (
      id bigserial primary key,
      delivery_id bigint not null references webhook_deliveries (id) on delete cascade,
      attempt integer not null,
      started_at timestamptz not null,
      duration_ms integer not null,
      status_code integer,
      error text not null default ''
    );
    create index webhook_attempts_delivery on webhook_attempts (delivery_id, id);
  `,
  );
}
