import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The first schema. Amounts are numeric(78,0) (any uint256 fits), read back as decimal strings;
 * block numbers are bigint; times are timestamptz in UTC.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table apps (
      id text primary key,
      name text not null,
      key_hash text not null unique,
      gasless boolean not null default false,
      default_slippage integer not null default 0 check (default_slippage between 0 and 10000),
      created_at timestamptz not null default now(),
      disabled_at timestamptz
    );

    create table chains (
      key text primary key,
      id text not null unique,
      family text not null,
      name text not null,
      native_asset_id text not null,
      icon text not null,
      explorer_url text not null,
      block_time_ms integer not null check (block_time_ms > 0),
      confirmation_target integer not null check (confirmation_target >= 0),
      source_timelock bigint not null check (source_timelock > 0),
      destination_timelock bigint not null check (destination_timelock > 0),
      is_active boolean not null,
      updated_at timestamptz not null default now()
    );

    create table assets (
      id text primary key,
      chain text not null references chains (key),
      symbol text not null,
      name text not null,
      icon text not null,
      decimals integer not null check (decimals between 0 and 36),
      htlc_address text not null,
      htlc_schema text not null,
      token_address text not null,
      token_schema text not null,
      min_amount numeric(78, 0) not null check (min_amount >= 0),
      max_amount numeric(78, 0) not null check (max_amount >= min_amount),
      price_id text not null,
      is_active boolean not null,
      listed_in text[] not null,
      updated_at timestamptz not null default now(),
      unique (chain, symbol)
    );

    create table solvers (
      id text primary key,
      name text not null,
      is_active boolean not null default true,
      created_at timestamptz not null default now()
    );

    create table solver_addresses (
      solver_id text not null references solvers (id),
      chain text not null references chains (key),
      address text not null,
      primary key (solver_id, chain)
    );

    -- The solver's on-chain balances as last read by its worker; the API reads them from here.
    create table solver_balances (
      solver_id text not null references solvers (id),
      asset text not null references assets (id),
      balance numeric(78, 0) not null check (balance >= 0),
      block_number bigint not null default 0,
      updated_at timestamptz not null default now(),
      primary key (solver_id, asset)
    );

    create table orders (
      id text primary key check (id ~ '^[0-9a-f]{64}$'),
      app_id text not null references apps (id),
      nonce text not null,
      solver_id text not null references solvers (id),
      integrator text not null,
      version text not null,
      slippage integer not null check (slippage >= 0),
      secret_hash text not null check (secret_hash ~ '^[0-9a-f]{64}$'),
      -- the service-held secret, encrypted at rest; null when the client keeps the secret
      secret_ciphertext bytea,
      deadline bigint not null,
      created_at timestamptz not null default now(),
      unique (app_id, nonce)
    );
    create index orders_created_at on orders (created_at desc);

    create table swaps (
      order_id text not null references orders (id),
      side text not null check (side in ('source', 'destination')),
      swap_id text not null,
      chain text not null references chains (key),
      asset text not null references assets (id),
      initiator text not null,
      redeemer text not null,
      delegate text not null default '',
      timelock bigint not null check (timelock > 0),
      amount numeric(78, 0) not null check (amount > 0),
      filled_amount numeric(78, 0) not null default 0,
      asset_price double precision not null default 0,
      secret_hash text not null,
      -- the secret once revealed on chain; empty until then
      secret text not null default '',
      instant_refund_tx text not null default '',
      initiate_tx_hash text not null default '',
      redeem_tx_hash text not null default '',
      refund_tx_hash text not null default '',
      initiate_block_number bigint not null default 0,
      redeem_block_number bigint not null default 0,
      refund_block_number bigint not null default 0,
      required_confirmations integer not null,
      current_confirmations integer not null default 0,
      initiate_timestamp timestamptz,
      redeem_timestamp timestamptz,
      refund_timestamp timestamptz,
      created_at timestamptz not null default now(),
      primary key (order_id, side),
      unique (chain, swap_id)
    );

    -- The firm quote each order was created at: its pricing terms.
    create table quotes (
      order_id text primary key references orders (id),
      solver_id text not null references solvers (id),
      source_asset text not null references assets (id),
      destination_asset text not null references assets (id),
      source_amount numeric(78, 0) not null,
      destination_amount numeric(78, 0) not null,
      source_price double precision not null,
      destination_price double precision not null,
      fee_bips integer not null check (fee_bips >= 0),
      fixed_fee text not null,
      slippage integer not null check (slippage >= 0),
      estimated_time integer not null check (estimated_time >= 0),
      deadline bigint not null,
      created_at timestamptz not null default now()
    );

    create table affiliate_fees (
      order_id text not null references orders (id),
      position integer not null,
      address text not null,
      fee_bips integer not null check (fee_bips between 0 and 10000),
      asset text not null references assets (id),
      amount numeric(78, 0) not null check (amount >= 0),
      status text not null default 'pending' check (status in ('pending', 'accrued', 'void')),
      accrued_at timestamptz,
      primary key (order_id, position)
    );

    -- Running totals per app, affiliate and fee asset: earned grows when an order completes,
    -- claimed when a claim is seen on chain.
    create table affiliate_earnings (
      app_id text not null references apps (id),
      affiliate text not null,
      asset text not null references assets (id),
      total_earned numeric(78, 0) not null default 0 check (total_earned >= 0),
      total_claimed numeric(78, 0) not null default 0 check (total_claimed >= 0 and total_claimed <= total_earned),
      updated_at timestamptz not null default now(),
      primary key (app_id, affiliate, asset)
    );

    -- The relayer's durable per-chain transaction queue. One row per (order, action): the
    -- idempotency key makes a repeated or concurrent request reuse the existing job.
    create table relayer_jobs (
      id bigserial primary key,
      chain text not null references chains (key),
      order_id text references orders (id),
      action text not null,
      idempotency_key text not null unique,
      payload jsonb not null,
      status text not null default 'queued'
        check (status in ('queued', 'running', 'submitted', 'confirmed', 'failed')),
      attempts integer not null default 0,
      max_attempts integer not null default 10,
      tx_hash text not null default '',
      nonce bigint,
      last_error text not null default '',
      run_after timestamptz not null default now(),
      locked_by text,
      locked_until timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index relayer_jobs_ready on relayer_jobs (chain, run_after)
      where status in ('queued', 'running', 'submitted');

    -- Leases so that exactly one instance runs each per-chain worker.
    create table worker_leases (
      name text primary key,
      holder text not null,
      expires_at timestamptz not null
    );

    -- Every change to an order (its row, swaps or fees) notifies 'order_changed' with the order id
    -- at commit, so every process's order cache drops it, whoever wrote.
    create function notify_order_changed() returns trigger language plpgsql as $$
    begin
      if tg_table_name = 'orders' then
        perform pg_notify('order_changed', coalesce(new.id, old.id));
      else
        perform pg_notify('order_changed', coalesce(new.order_id, old.order_id));
      end if;
      return null;
    end $$;
    create trigger orders_changed after insert or update or delete on orders
      for each row execute function notify_order_changed();
    create trigger swaps_changed after insert or update or delete on swaps
      for each row execute function notify_order_changed();
    create trigger affiliate_fees_changed after insert or update or delete on affiliate_fees
      for each row execute function notify_order_changed();
  `,
  );
}
