import type { ColumnType, Generated } from 'kysely';

/** Numeric and bigint columns come back as decimal strings; writes accept bigint or string. */
type Decimal = ColumnType<string, bigint | string, bigint | string>;
type DecimalDefault = ColumnType<string, bigint | string | undefined, bigint | string>;
/** timestamptz columns come back as Postgres text in UTC (`2026-01-02 03:04:05.123456+00`). */
type Timestamp = ColumnType<string, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<string | null, Date | string | null | undefined, Date | string | null>;
type WithDefault<T> = ColumnType<T, T | undefined, T>;

export interface AppsTable {
  id: string;
  name: string;
  key_hash: string;
  gasless: WithDefault<boolean>;
  default_slippage: WithDefault<number>;
  created_at: Timestamp;
  disabled_at: NullableTimestamp;
}

export interface ChainsTable {
  key: string;
  id: string;
  family: string;
  name: string;
  native_asset_id: string;
  icon: string;
  explorer_url: string;
  block_time_ms: number;
  confirmation_target: number;
  source_timelock: Decimal;
  destination_timelock: Decimal;
  is_active: boolean;
  updated_at: Timestamp;
}

export interface AssetsTable {
  id: string;
  chain: string;
  symbol: string;
  name: string;
  icon: string;
  decimals: number;
  htlc_address: string;
  htlc_schema: string;
  token_address: string;
  token_schema: string;
  min_amount: Decimal;
  max_amount: Decimal;
  price_id: string;
  is_active: boolean;
  listed_in: string[];
  updated_at: Timestamp;
}

export interface SolversTable {
  id: string;
  name: string;
  is_active: WithDefault<boolean>;
  created_at: Timestamp;
}

export interface SolverAddressesTable {
  solver_id: string;
  chain: string;
  address: string;
}

export interface SolverBalancesTable {
  solver_id: string;
  asset: string;
  balance: Decimal;
  /** Destination amounts reserved by open orders, not yet funded. */
  committed: DecimalDefault;
  block_number: DecimalDefault;
  updated_at: Timestamp;
}

export interface OrdersTable {
  id: string;
  app_id: string;
  nonce: string;
  solver_id: string;
  integrator: string;
  version: string;
  slippage: number;
  secret_hash: string;
  secret_ciphertext: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
  deadline: Decimal;
  created_at: Timestamp;
  commitment_released: WithDefault<boolean>;
  request_hash: WithDefault<string>;
  delegate_key_ciphertext: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
}

export interface SwapsTable {
  order_id: string;
  side: 'source' | 'destination';
  swap_id: string;
  chain: string;
  asset: string;
  initiator: string;
  redeemer: string;
  delegate: WithDefault<string>;
  timelock: Decimal;
  amount: Decimal;
  filled_amount: DecimalDefault;
  asset_price: WithDefault<number>;
  secret_hash: string;
  secret: WithDefault<string>;
  instant_refund_tx: WithDefault<string>;
  /** The API's field: one hash, or a Bitcoin-family swap's funding txids comma-separated. */
  initiate_tx_hash: WithDefault<string>;
  /** `initiate_tx_hash` as a list, kept by the database (migration 0017). */
  initiate_tx_hashes: ColumnType<string[], never, never>;
  redeem_tx_hash: WithDefault<string>;
  refund_tx_hash: WithDefault<string>;
  initiate_block_number: DecimalDefault;
  redeem_block_number: DecimalDefault;
  refund_block_number: DecimalDefault;
  required_confirmations: number;
  current_confirmations: WithDefault<number>;
  initiate_timestamp: NullableTimestamp;
  redeem_timestamp: NullableTimestamp;
  refund_timestamp: NullableTimestamp;
  created_at: Timestamp;
}

export interface QuotesTable {
  order_id: string;
  solver_id: string;
  source_asset: string;
  destination_asset: string;
  source_amount: Decimal;
  destination_amount: Decimal;
  source_price: number;
  destination_price: number;
  fee_bips: number;
  fixed_fee: string;
  slippage: number;
  estimated_time: number;
  deadline: Decimal;
  created_at: Timestamp;
}

export interface AffiliateFeesTable {
  order_id: string;
  position: number;
  address: string;
  fee_bips: number;
  asset: string;
  amount: Decimal;
  status: WithDefault<'pending' | 'accrued' | 'void'>;
  accrued_at: NullableTimestamp;
}

export interface AffiliateEarningsTable {
  app_id: string;
  affiliate: string;
  asset: string;
  total_earned: DecimalDefault;
  total_claimed: DecimalDefault;
  updated_at: Timestamp;
}

export type JobStatus = 'queued' | 'running' | 'submitted' | 'confirmed' | 'failed';
/** The account that signs a job's transaction. */
export type JobSigner = 'relayer' | 'solver';

export interface RelayerJobsTable {
  id: Generated<string>;
  chain: string;
  order_id: string | null;
  action: string;
  idempotency_key: string;
  signer: WithDefault<JobSigner>;
  payload: ColumnType<unknown, string, string>;
  status: WithDefault<JobStatus>;
  attempts: WithDefault<number>;
  max_attempts: WithDefault<number>;
  tx_hash: WithDefault<string>;
  /** The account's sequence number of the signed transaction (EVM); null where a family has none. */
  nonce: ColumnType<string | null, bigint | string | null | undefined, bigint | string | null>;
  /** The last block height at which the signed transaction can land (Solana); null where it does not expire so. */
  valid_until_height: ColumnType<string | null, bigint | string | null | undefined, bigint | string | null>;
  /** The signed transaction as its chain's node takes it (EVM hex, Solana base64, Bitcoin hex); '' before signing. */
  raw_tx: WithDefault<string>;
  /** Every transaction id signed for the job, the current one last. */
  tx_hashes: ColumnType<string[], string[] | undefined, string[]>;
  signed_at: NullableTimestamp;
  last_error: WithDefault<string>;
  run_after: Timestamp;
  locked_by: string | null;
  locked_until: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  deferrals: WithDefault<number>;
  broadcast_by: NullableTimestamp;
  cancelled_at: NullableTimestamp;
}

export interface WorkerLeasesTable {
  name: string;
  holder: string;
  expires_at: Timestamp;
}

export interface ChainHeightsTable {
  chain: string;
  height: Decimal;
  updated_at: Timestamp;
}

/** The last block a chain's watcher processed. */
export interface WatcherCursorsTable {
  chain: string;
  block_number: Decimal;
  updated_at: Timestamp;
}

/** Hashes of the blocks a watcher processed inside its confirmation window (its reorg check). */
export interface WatchedBlocksTable {
  chain: string;
  number: Decimal;
  hash: string;
}

export interface Database {
  apps: AppsTable;
  chains: ChainsTable;
  assets: AssetsTable;
  solvers: SolversTable;
  solver_addresses: SolverAddressesTable;
  solver_balances: SolverBalancesTable;
  orders: OrdersTable;
  swaps: SwapsTable;
  quotes: QuotesTable;
  affiliate_fees: AffiliateFeesTable;
  affiliate_earnings: AffiliateEarningsTable;
  relayer_jobs: RelayerJobsTable;
  worker_leases: WorkerLeasesTable;
  chain_heights: ChainHeightsTable;
  watcher_cursors: WatcherCursorsTable;
  watched_blocks: WatchedBlocksTable;
  order_events: OrderEventsTable;
  order_event_heads: OrderEventHeadsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export interface OrderEventsTable {
  id: Generated<string>;
  order_id: string;
  app_id: string;
  status: string;
  created_at: Timestamp;
  /** The order as the order read showed it when the event was recorded. */
  order_json: string;
}

export interface OrderEventHeadsTable {
  order_id: string;
  status: string;
  event_id: Decimal;
}

export interface WebhookEndpointsTable {
  id: string;
  app_id: string;
  url: string;
  /** null: every status. */
  statuses: string[] | null;
  secret_ciphertext: Uint8Array;
  created_at: Timestamp;
  disabled_at: NullableTimestamp;
  disabled_reason: WithDefault<string>;
  consecutive_failures: WithDefault<number>;
  failing_since: NullableTimestamp;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  endpoint_id: string;
  event_id: Decimal;
  body: string;
  status: WithDefault<WebhookDeliveryStatus>;
  attempts: WithDefault<number>;
  next_attempt_at: Timestamp;
  locked_by: string | null;
  locked_until: NullableTimestamp;
  last_status_code: number | null;
  last_error: WithDefault<string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  delivered_at: NullableTimestamp;
}

export interface WebhookAttemptsTable {
  id: Generated<string>;
  delivery_id: Decimal;
  attempt: number;
  started_at: Timestamp;
  duration_ms: number;
  status_code: number | null;
  error: WithDefault<string>;
}
