import type { ColumnType } from 'kysely';

/**
 * The database's tables as the code sees them. `SCHEMA` describes every table and column the migrations
 * create (its Postgres type, whether it takes null, whether the database fills it in), and the Kysely
 * types (`Database` and the `*Table` types) are derived from it, so the two cannot differ.
 * test/store/schema.test.ts migrates both stores and compares `SCHEMA` with `information_schema`: a
 * column a migration adds without a line here, or a line here without its column, fails it.
 */

declare const KYSELY: unique symbol;

/** One column: how Postgres reports it, and (at the type level only) its Kysely select, insert and update types. */
export interface Column<S, I = S, U = I> {
  /** `information_schema.columns.data_type` (an array is `ARRAY`). */
  readonly type: string;
  readonly nullable: boolean;
  /** `default`: the database has a default, so an insert may leave it out; `generated`: the database computes it, no write names it. */
  readonly filled: 'no' | 'default' | 'generated';
  readonly [KYSELY]?: ColumnType<S, I, U>;
}

const column = <S, I = S, U = I>(type: string): Column<S, I, U> => ({ type, nullable: false, filled: 'no' });

const text = <T extends string = string>() => column<T>('text');
const integer = <T extends number = number>() => column<T>('integer');
const boolean = () => column<boolean>('boolean');
const double = () => column<number>('double precision');
/** int8 and numeric come back as decimal strings (database.ts); writes take a bigint or a string. */
const bigint = () => column<string, bigint | string>('bigint');
const numeric = () => column<string, bigint | string>('numeric');
/** timestamptz comes back as Postgres text in UTC (`2026-01-02 03:04:05.123456+00`). */
const timestamptz = () => column<string, Date | string>('timestamp with time zone');
const bytea = () => column<Uint8Array>('bytea');
const textArray = () => column<string[]>('ARRAY');
/** jsonb: read back parsed, written as JSON text. */
const jsonb = <T = unknown>() => column<T, string>('jsonb');

/** The database fills the column in when an insert leaves it out. */
const withDefault = <S, I, U>(c: Column<S, I, U>): Column<S, I | undefined, U> => ({ ...c, filled: 'default' });
/** The column takes null (and an insert may leave it out). */
const nullable = <S, I, U>(c: Column<S, I, U>): Column<S | null, I | null, U | null> => ({ ...c, nullable: true });
/** The database computes the column from others; no insert or update names it. */
const generated = <S, I, U>(c: Column<S, I, U>): Column<S, never, never> => ({ type: c.type, nullable: c.nullable, filled: 'generated' });
/** A bigserial id: a decimal string, drawn by the database. */
const serial = () => withDefault(column<string>('bigint'));

/** What an order event tells: a new status, or a relayed action of the client that failed. */
export type OrderEventType = 'order.status' | 'order.action_failed';
export type JobStatus = 'queued' | 'running' | 'submitted' | 'confirmed' | 'failed';
/** The account that signs a job's transaction. */
export type JobSigner = 'relayer' | 'solver';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export const SCHEMA = {
  apps: {
    id: text(),
    name: text(),
    key_hash: text(),
    gasless: withDefault(boolean()),
    default_slippage: withDefault(integer()),
    created_at: withDefault(timestamptz()),
    disabled_at: nullable(timestamptz()),
    /** The app's own request limit, both or neither (migration 0018); none: the config's per-key limit. */
    rate_limit_max: nullable(integer()),
    rate_limit_window_ms: nullable(integer()),
  },
  chains: {
    key: text(),
    id: text(),
    family: text(),
    name: text(),
    native_asset_id: text(),
    icon: text(),
    explorer_url: text(),
    block_time_ms: integer(),
    confirmation_target: integer(),
    source_timelock: bigint(),
    destination_timelock: bigint(),
    is_active: boolean(),
    updated_at: withDefault(timestamptz()),
  },
  assets: {
    id: text(),
    chain: text(),
    symbol: text(),
    name: text(),
    icon: text(),
    decimals: integer(),
    htlc_address: text(),
    htlc_schema: text(),
    token_address: text(),
    token_schema: text(),
    min_amount: numeric(),
    max_amount: numeric(),
    price_id: text(),
    is_active: boolean(),
    listed_in: textArray(),
    updated_at: withDefault(timestamptz()),
  },
  solvers: {
    id: text(),
    name: text(),
    is_active: withDefault(boolean()),
    created_at: withDefault(timestamptz()),
    /** A registered solver's key, hashed (migration 0020); none: a solver of the config, run in-process. */
    key_hash: nullable(text()),
    revoked_at: nullable(timestamptz()),
    /** Suspended from quoting (migration 0021): by `suspendOverdueSolvers` or the operator, until restored. */
    suspended_at: nullable(timestamptz()),
    suspended_reason: nullable(text()),
    restored_at: nullable(timestamptz()),
  },
  solver_addresses: {
    solver_id: text(),
    chain: text(),
    address: text(),
    /** A registered solver's signature proving the address its own (`solverAddressMessage`); none for the config's solvers. */
    proof: nullable(text()),
    proven_at: nullable(timestamptz()),
  },
  /** The pairs a registered solver answers quote requests for (migration 0022). */
  solver_pairs: {
    solver_id: text(),
    source_asset: text(),
    destination_asset: text(),
  },
  solver_balances: {
    solver_id: text(),
    asset: text(),
    balance: numeric(),
    /** Destination amounts reserved by open orders, not yet funded. */
    committed: withDefault(numeric()),
    block_number: withDefault(bigint()),
    updated_at: withDefault(timestamptz()),
  },
  orders: {
    id: text(),
    app_id: text(),
    nonce: text(),
    solver_id: text(),
    integrator: text(),
    version: text(),
    slippage: integer(),
    secret_hash: text(),
    /** The service-held secret, encrypted at rest; null when the client keeps the secret. */
    secret_ciphertext: nullable(bytea()),
    deadline: bigint(),
    created_at: withDefault(timestamptz()),
    /** The order's liquidity reservation has been returned (migration 0002). */
    commitment_released: withDefault(boolean()),
    /** sha256 of the normalized create request. */
    request_hash: withDefault(text()),
    /** A per-order key the service holds for a side without a client delegate, encrypted at rest. */
    delegate_key_ciphertext: nullable(bytea()),
    /** The solver co-signed an instant refund: it never funds the destination (rule 5, migration 0006). */
    instant_refund_signed: withDefault(boolean()),
    /** When the solver recorded its intent to fund the destination (rule 5, migration 0007). */
    destination_funding_at: nullable(timestamptz()),
    /** The client's standing consent to an instant refund, `{"signatures": [hex, ...]}` (migration 0011). */
    instant_refund_consent: nullable(jsonb<{ signatures: string[] }>()),
  },
  swaps: {
    order_id: text(),
    side: text<'source' | 'destination'>(),
    swap_id: text(),
    chain: text(),
    asset: text(),
    initiator: text(),
    redeemer: text(),
    delegate: withDefault(text()),
    timelock: bigint(),
    amount: numeric(),
    filled_amount: withDefault(numeric()),
    asset_price: withDefault(double()),
    secret_hash: text(),
    secret: withDefault(text()),
    instant_refund_tx: withDefault(text()),
    /** The API's field: one hash, or a Bitcoin-family swap's funding txids comma-separated. */
    initiate_tx_hash: withDefault(text()),
    /** `initiate_tx_hash` as a list, kept by the database (migration 0017). */
    initiate_tx_hashes: generated(textArray()),
    redeem_tx_hash: withDefault(text()),
    refund_tx_hash: withDefault(text()),
    initiate_block_number: withDefault(bigint()),
    redeem_block_number: withDefault(bigint()),
    refund_block_number: withDefault(bigint()),
    required_confirmations: integer(),
    current_confirmations: withDefault(integer()),
    initiate_timestamp: nullable(timestamptz()),
    redeem_timestamp: nullable(timestamptz()),
    refund_timestamp: nullable(timestamptz()),
    created_at: withDefault(timestamptz()),
  },
  quotes: {
    order_id: text(),
    solver_id: text(),
    source_asset: text(),
    destination_asset: text(),
    source_amount: numeric(),
    destination_amount: numeric(),
    source_price: double(),
    destination_price: double(),
    fee_bips: integer(),
    fixed_fee: text(),
    slippage: integer(),
    estimated_time: integer(),
    deadline: bigint(),
    created_at: withDefault(timestamptz()),
  },
  affiliate_fees: {
    order_id: text(),
    position: integer(),
    address: text(),
    fee_bips: integer(),
    asset: text(),
    amount: numeric(),
    status: withDefault(text<'pending' | 'accrued' | 'void'>()),
    accrued_at: nullable(timestamptz()),
  },
  affiliate_earnings: {
    app_id: text(),
    affiliate: text(),
    asset: text(),
    total_earned: withDefault(numeric()),
    total_claimed: withDefault(numeric()),
    updated_at: withDefault(timestamptz()),
  },
  relayer_jobs: {
    id: serial(),
    chain: text(),
    order_id: nullable(text()),
    action: text(),
    idempotency_key: text(),
    signer: withDefault(text<JobSigner>()),
    payload: jsonb(),
    status: withDefault(text<JobStatus>()),
    attempts: withDefault(integer()),
    max_attempts: withDefault(integer()),
    tx_hash: withDefault(text()),
    /** The account's sequence number of the signed transaction (EVM); null where a family has none. */
    nonce: nullable(bigint()),
    /** The chain's height when its simulation last reverted: it is simulated again on a newer block (migration 0024). */
    refused_at_height: nullable(bigint()),
    /** The last block height at which the signed transaction can land (Solana); null where it does not expire so. */
    valid_until_height: nullable(bigint()),
    /** The signed transaction as its chain's node takes it (EVM hex, Solana base64, Bitcoin hex); '' before signing. */
    raw_tx: withDefault(text()),
    /** Every transaction id signed for the job, the current one last. */
    tx_hashes: withDefault(textArray()),
    signed_at: nullable(timestamptz()),
    last_error: withDefault(text()),
    run_after: withDefault(timestamptz()),
    locked_by: nullable(text()),
    locked_until: nullable(timestamptz()),
    created_at: withDefault(timestamptz()),
    updated_at: withDefault(timestamptz()),
    deferrals: withDefault(integer()),
    broadcast_by: nullable(timestamptz()),
    cancelled_at: nullable(timestamptz()),
  },
  worker_leases: {
    name: text(),
    holder: text(),
    expires_at: timestamptz(),
  },
  chain_heights: {
    chain: text(),
    height: bigint(),
    updated_at: withDefault(timestamptz()),
  },
  /** The last block a chain's watcher processed. */
  watcher_cursors: {
    chain: text(),
    block_number: bigint(),
    updated_at: withDefault(timestamptz()),
  },
  /** Hashes of the blocks a watcher processed inside its confirmation window (its reorg check). */
  watched_blocks: {
    chain: text(),
    number: bigint(),
    hash: text(),
  },
  /** Outputs paying a watched Bitcoin-family script, mempool and mined, and their spenders (migration 0008). */
  bitcoin_utxos: {
    chain: text(),
    txid: text(),
    vout: integer(),
    /** The output's scriptPubKey (hex). */
    script: text(),
    /** The watched address the script encodes: an HTLC's swap_id, or a wallet address. */
    address: text(),
    value: numeric(),
    /** null while the funding transaction is only in the mempool. */
    block_number: nullable(bigint()),
    block_time: nullable(timestamptz()),
    spent_txid: nullable(text()),
    /** null while the spending transaction is only in the mempool (or unspent). */
    spent_block_number: nullable(bigint()),
  },
  order_events: {
    id: serial(),
    order_id: text(),
    app_id: text(),
    status: text(),
    created_at: withDefault(timestamptz()),
    /** The order as the order read showed it when the event was recorded. */
    order_json: text(),
    /** The order's solver (migration 0022): what a solver's stream of its matched orders follows. */
    solver_id: nullable(text()),
    /** `order.status`, or `order.action_failed` (migration 0024). */
    type: withDefault(text<OrderEventType>()),
  },
  order_event_heads: {
    order_id: text(),
    status: text(),
    event_id: bigint(),
    /** The failed actions the log has told (`failureKey`), so each failure is told once. */
    failures: withDefault(text()),
  },
  webhook_endpoints: {
    id: text(),
    app_id: text(),
    url: text(),
    /** null: every status. */
    statuses: nullable(textArray()),
    secret_ciphertext: bytea(),
    created_at: withDefault(timestamptz()),
    disabled_at: nullable(timestamptz()),
    disabled_reason: withDefault(text()),
    consecutive_failures: withDefault(integer()),
    failing_since: nullable(timestamptz()),
  },
  webhook_deliveries: {
    id: serial(),
    endpoint_id: text(),
    event_id: bigint(),
    body: text(),
    status: withDefault(text<WebhookDeliveryStatus>()),
    attempts: withDefault(integer()),
    next_attempt_at: withDefault(timestamptz()),
    locked_by: nullable(text()),
    locked_until: nullable(timestamptz()),
    last_status_code: nullable(integer()),
    last_error: withDefault(text()),
    created_at: withDefault(timestamptz()),
    updated_at: withDefault(timestamptz()),
    delivered_at: nullable(timestamptz()),
  },
  fee_claim_signatures: {
    affiliate: text(),
    asset: text(),
    contract: text(),
    cumulative_amount: numeric(),
    signature: text(),
    signed_at: withDefault(timestamptz()),
  },
  bitcoin_spend_requests: {
    idempotency_key: text(),
    order_id: text(),
    action: text(),
    sealed_body: bytea(),
    status: withDefault(text<'pending' | 'done' | 'refused'>()),
    error_code: withDefault(text()),
    error_message: withDefault(text()),
    created_at: withDefault(timestamptz()),
    updated_at: withDefault(timestamptz()),
  },
  aggregator_quotes: {
    app_id: text(),
    idempotency_key: text(),
    /** sha256 of the request body as the Aggregator API read it. */
    request_hash: text(),
    order_id: text(),
    created_at: withDefault(timestamptz()),
  },
  aggregator_deposits: {
    order_id: text(),
    tx_hash: text(),
    at: withDefault(timestamptz()),
  },
  webhook_attempts: {
    id: serial(),
    delivery_id: bigint(),
    attempt: integer(),
    started_at: timestamptz(),
    duration_ms: integer(),
    status_code: nullable(integer()),
    error: withDefault(text()),
  },
} as const satisfies Record<string, Record<string, Column<unknown, unknown, unknown>>>;

/** A described table as Kysely sees it: each column's select, insert and update types. */
type TableOf<T> = { -readonly [C in keyof T]: T[C] extends Column<infer S, infer I, infer U> ? ColumnType<S, I, U> : never };

export type Database = { [T in keyof typeof SCHEMA]: TableOf<(typeof SCHEMA)[T]> };

export type AppsTable = Database['apps'];
export type ChainsTable = Database['chains'];
export type AssetsTable = Database['assets'];
export type SolversTable = Database['solvers'];
export type SolverAddressesTable = Database['solver_addresses'];
export type SolverBalancesTable = Database['solver_balances'];
export type OrdersTable = Database['orders'];
export type SwapsTable = Database['swaps'];
export type QuotesTable = Database['quotes'];
export type AffiliateFeesTable = Database['affiliate_fees'];
export type AffiliateEarningsTable = Database['affiliate_earnings'];
export type RelayerJobsTable = Database['relayer_jobs'];
export type WorkerLeasesTable = Database['worker_leases'];
export type ChainHeightsTable = Database['chain_heights'];
export type WatcherCursorsTable = Database['watcher_cursors'];
export type WatchedBlocksTable = Database['watched_blocks'];
export type BitcoinUtxosTable = Database['bitcoin_utxos'];
export type OrderEventsTable = Database['order_events'];
export type OrderEventHeadsTable = Database['order_event_heads'];
export type WebhookEndpointsTable = Database['webhook_endpoints'];
export type WebhookDeliveriesTable = Database['webhook_deliveries'];
export type WebhookAttemptsTable = Database['webhook_attempts'];
