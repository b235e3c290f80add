import { Type, type TSchema } from '@sinclair/typebox';
import { ORDER_STATUSES } from '../orders/status.ts';
import { ERROR_CODES } from '../errors.ts';

/** Schemas of the HTTP API, as interface-spec.md shapes it; they drive validation, serialization and /docs. */

declare module 'fastify' {
  interface FastifySchema {
    /** A body only shown in the OpenAPI document: the route checks it itself, once it knows which shape applies. */
    documentedBody?: TSchema;
  }
}

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const BaseUnits = (description: string) => Type.String({ pattern: '^[0-9]+$', description });

export const Ok = <T extends TSchema>(result: T) =>
  Type.Object({ status: Type.Literal('Ok'), result }, { description: 'Success envelope' });

export const ErrorEnvelope = Type.Object(
  {
    status: Type.Literal('Error'),
    error: Type.String({ description: 'What went wrong, naming the field at fault' }),
    code: Type.Union(
      ERROR_CODES.map((code) => Type.Literal(code)),
      { description: 'Stable error code (the table in docs/api.md says when each is answered, and with which HTTP status)' },
    ),
  },
  { $id: 'ErrorEnvelope', description: 'Failure envelope' },
);

export const QuoteError = Type.Object({ error: Type.String() }, { $id: 'QuoteError', description: 'Failure of the quote read' });

export const HexId = Type.String({
  pattern: '^[0-9a-fA-F]{64}$',
  errorMessage: 'must be 64 hexadecimal characters',
  description: '32 bytes as 64 hex characters, no 0x',
});

export const AmountView = Type.Object(
  {
    asset: Type.String({ description: 'Asset identifier <chain>:<symbol>' }),
    amount: BaseUnits('Smallest units'),
    display: Type.String({ description: 'Amount with the asset decimals' }),
    value: Type.String({ description: 'USD value' }),
  },
  { $id: 'AmountView' },
);

const HtlcRef = Type.Object({ address: Type.String(), schema: Type.String() });

const assetFields = {
  id: Type.String({ description: 'Asset identifier <chain>:<symbol>' }),
  name: Type.String(),
  chain: Type.String({ description: 'Chain id <family>:<number>' }),
  icon: Type.String(),
  htlc: HtlcRef,
  token: HtlcRef,
  decimals: Type.Integer(),
  min_amount: BaseUnits('Smallest swap amount, in base units'),
  max_amount: BaseUnits('Largest swap amount, in base units'),
  price: Type.Number({ description: 'USD price of one whole unit (0 when unknown)' }),
};

export const AssetV2 = Type.Object(assetFields, { $id: 'AssetV2' });
export const AssetV3 = Type.Object({ ...assetFields, is_active: Type.Boolean() }, { $id: 'AssetV3' });

const chainFields = {
  chain: Type.String({ description: 'Chain key, e.g. arbitrum' }),
  name: Type.String(),
  id: Type.String({ description: '<family>:<chain number>' }),
  native_asset_id: Type.String(),
  icon: Type.String(),
  explorer_url: Type.String(),
  confirmation_target: Type.Integer(),
  source_timelock: Type.String({ description: 'Relative, in the chain units (blocks or slots)' }),
  destination_timelock: Type.String({ description: 'Relative, in the chain units (blocks or slots)' }),
  supported_htlc_schemas: Type.Array(Type.String()),
  supported_token_schemas: Type.Array(Type.String()),
  is_active: Type.Boolean(),
};

export const Chain = Type.Object({ ...chainFields, assets: Type.Array(Type.Ref('AssetV3')) }, { $id: 'Chain' });

export const ChainV2 = Type.Object(
  {
    ...chainFields,
    display: Type.String({ description: 'The chain name to display (the same as name)' }),
    assets: Type.Array(Type.Ref('AssetV2')),
  },
  { $id: 'ChainV2', description: 'Element of GET /v2/chains: the v3 chain fields, with display, listing the active v2 assets' },
);

const PolicyRules = (description: string) => Type.Array(Type.String(), { description });

export const RoutePolicy = Type.Object(
  {
    default: Type.Union([Type.Literal('open'), Type.Literal('closed')], { description: 'Whether routes no rule decides are allowed' }),
    isolation_groups: PolicyRules('"A -> B" or "A <-> B": an asset a rule names may only be swapped with its other side'),
    blacklist_pairs: PolicyRules('Refused routes'),
    whitelist_overrides: PolicyRules('Routes allowed although a blacklist rule matches them'),
  },
  {
    $id: 'RoutePolicy',
    description:
      'Rules are "chain:SYMBOL -> chain:SYMBOL" (one way) or "<->" (both ways); * stands for any chain or symbol. ' +
      'Order: isolation, then the blacklist unless whitelisted, then the default.',
  },
);

export const Swap = Type.Object(
  {
    created_at: Type.String({ description: 'RFC 3339 UTC with microseconds' }),
    swap_id: Type.String(),
    chain: Type.String(),
    asset: Type.String(),
    initiator: Type.String(),
    redeemer: Type.String(),
    delegate: Type.String(),
    timelock: Type.Integer({ description: 'Relative, in the chain units' }),
    filled_amount: BaseUnits('Amount locked on chain so far'),
    asset_price: Type.Number(),
    amount: BaseUnits('Swap amount'),
    secret_hash: Type.String(),
    secret: Type.String({ description: 'Empty until revealed on chain' }),
    instant_refund_tx: Type.String(),
    initiate_tx_hash: Type.String(),
    redeem_tx_hash: Type.String(),
    refund_tx_hash: Type.String(),
    initiate_block_number: Type.String(),
    redeem_block_number: Type.String(),
    refund_block_number: Type.String(),
    required_confirmations: Type.Integer(),
    current_confirmations: Type.Integer(),
    initiate_timestamp: Nullable(Type.String()),
    redeem_timestamp: Nullable(Type.String()),
    refund_timestamp: Nullable(Type.String()),
  },
  { $id: 'Swap' },
);

export const AffiliateFee = Type.Object(
  {
    address: Type.String(),
    asset: Type.String({ description: 'Asset the fee is paid in' }),
    fee: Type.Integer({ description: 'Bips of the source amount' }),
  },
  { $id: 'AffiliateFee' },
);

/** The client's relayed actions that failed (an order read's `failed_actions`). */
export const FailedActions = Type.Array(
  Type.Object({
    action: Type.String({ description: 'initiate, redeem, refund or instant-refund' }),
    reason: Type.String({ description: "The chain's reason: a revert by its error name (`reverted: ERC20InsufficientAllowance`), or why it was not sent" }),
    failed_at: Type.String({ description: 'RFC 3339 UTC with microseconds' }),
  }),
  {
    description:
      'The actions relayed for the client (PATCH ?action=) that failed for good, oldest first; an `order.action_failed` event tells each. ' +
      'Once the cause is fixed (an allowance, a balance), the same PATCH is carried out again and the action leaves this list.',
  },
);

export const Order = Type.Object(
  {
    order_id: Type.String(),
    created_at: Type.String({ description: 'RFC 3339 UTC with microseconds' }),
    source_swap: Type.Ref('Swap'),
    destination_swap: Type.Ref('Swap'),
    nonce: Type.String(),
    deadline: Type.Integer({ description: 'Unix seconds: the latest moment the source may be initiated' }),
    affiliate_fees: Type.Array(Type.Ref('AffiliateFee')),
    integrator: Type.String(),
    version: Type.String(),
    solver_id: Type.String(),
    slippage: Type.Integer({ description: 'Bips' }),
    status: Type.Union(
      ORDER_STATUSES.map((s) => Type.Literal(s)),
      { description: 'Derived from the swaps, the deadline and the chain heights: see docs/order-status.md' },
    ),
    failed_actions: FailedActions,
  },
  { $id: 'Order' },
);

export const PaginatedOrders = Type.Object(
  {
    data: Type.Array(Type.Ref('Order')),
    page: Type.Integer({ description: 'This page, from 1' }),
    total_pages: Type.Integer({ description: 'ceil(total_items / per_page); 0 when nothing matches' }),
    total_items: Type.Integer({ description: 'Orders matching the filters' }),
    per_page: Type.Integer(),
  },
  { $id: 'PaginatedOrders' },
);

export const TxRequest = Type.Object(
  {
    to: Type.String(),
    value: Type.String({ description: 'Hex quantity' }),
    data: Type.String({ description: 'Hex calldata' }),
    gas_limit: Type.String({ description: 'Hex quantity' }),
    chain_id: Type.Integer(),
  },
  { $id: 'TxRequest' },
);

export const StarknetCall = Type.Object(
  {
    to: Type.String({ description: 'The contract, 0x + 64 hex' }),
    selector: Type.String({ description: "The entry point's selector" }),
    calldata: Type.Array(Type.String({ description: 'A felt, minimal 0x hex' })),
  },
  { $id: 'StarknetCall', description: 'A Starknet contract call; execute the approval and the initiate together as one multicall' },
);

export const Initiate = Type.Union(
  [
    Type.Object({
      type: Type.Literal('evm'),
      chain_id: Type.Integer(),
      approval_transaction: Nullable(Type.Ref('TxRequest')),
      initiate_transaction: Type.Ref('TxRequest'),
      core_to_evm_transfer: Nullable(Type.Ref('TxRequest')),
    }),
    Type.Object({
      type: Type.Literal('bitcoin'),
      to: Type.String({ description: 'The taproot HTLC address to fund' }),
      amount: BaseUnits('Exact amount to send'),
    }),
    Type.Object({
      type: Type.Literal('solana'),
      versioned_tx: Type.String({ description: 'Base64 unsigned v0 transaction on a recent blockhash; the client signs and sends it' }),
    }),
    Type.Object(
      {
        type: Type.Literal('starknet'),
        chain_id: Type.String({ description: "The network's chain id felt, hex (SN_MAIN: 0x534e5f4d41494e)" }),
        approval_transaction: Nullable(Type.Ref('StarknetCall')),
        initiate_transaction: Type.Ref('StarknetCall'),
      },
      { description: 'Starknet does not settle here yet: the order is created and its initiate shown, but nothing follows it' },
    ),
    Type.Object({
      type: Type.Literal('tron'),
      approval_transaction: Type.Object({}, { additionalProperties: true }),
      initiate_transaction: Type.Object({}, { additionalProperties: true }),
    }),
    Type.Null(),
  ],
  { $id: 'Initiate' },
);

export const Quote = Type.Object(
  {
    id: Type.String({ description: 'The order id' }),
    solver_id: Type.String(),
    secret_hash: Type.String(),
    source_swap_id: Type.String(),
    destination_swap_id: Type.String(),
    source: Type.Ref('AmountView'),
    destination: Type.Ref('AmountView'),
    fee: Type.Integer({ description: 'Bips' }),
    fixed_fee: Type.String(),
    slippage: Type.Integer({ description: 'Bips' }),
    estimated_time: Type.Integer({ description: 'Seconds' }),
    deadline: Type.Integer({ description: 'Unix seconds' }),
    initiate: Type.Ref('Initiate'),
    status: Type.Union(['open', 'accepted', 'fulfilled', 'expired', 'refunded'].map((s) => Type.Literal(s))),
  },
  { $id: 'Quote' },
);

export const LiquidityEntry = Type.Object(
  {
    asset: Type.String(),
    address: Type.String({ description: 'The solver address on the asset chain' }),
    balance: BaseUnits('On-chain balance'),
    virtual_balance: BaseUnits('Balance minus what open orders have committed: what new orders can use'),
    readable_balance: Type.String(),
    fiat_value: Type.String({ description: 'USD value of the balance' }),
  },
  { $id: 'LiquidityEntry' },
);

export const SolverRecordView = Type.Object(
  {
    matched: Type.Integer({ description: 'Orders matched to the solver in the last 30 days' }),
    filled: Type.Integer({ description: 'Of those, orders whose destination it funded' }),
    filled_late: Type.Integer({ description: "Funded more than solver_fund_within_seconds after the source's confirmations could have arrived" }),
    unfilled: Type.Integer({ description: 'Confirmed sources it had to fund and did not, past that time' }),
    median_seconds_to_fund: Type.Union([Type.Number(), Type.Null()], { description: "From the source's initiate block to the destination's; null with none funded" }),
    suspended: Type.Boolean({ description: 'Suspended from quoting until the operator restores it' }),
    suspended_reason: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'SolverRecord' },
);

export const Liquidity = Type.Object(
  {
    solver_id: Type.String(),
    liquidity: Type.Array(Type.Ref('LiquidityEntry')),
    record: Type.Optional(Type.Ref('SolverRecord', { description: "The solver's record (not in Garden's API)" })),
  },
  { $id: 'Liquidity' },
);

export const EarningsEntry = Type.Object(
  {
    total_earnings: BaseUnits(
      "All fees the affiliate earned in the asset through every app's orders, in base units: the cumulative amount the claim signature covers",
    ),
    total_earnings_usd: Type.String(),
    affiliate: Type.String(),
    asset: Type.String(),
    token_address: Type.String(),
    claim_amount: Type.Optional(BaseUnits('Earned (through every app) and not yet claimed: what the claim pays')),
    claim_amount_usd: Type.Optional(Type.String()),
    claim_signature: Type.Optional(Type.String()),
    claim_contract: Type.Optional(Type.String()),
  },
  { $id: 'EarningsEntry' },
);

export const AffiliateHistoryItem = Type.Object(
  {
    asset: Type.String({ description: 'The fee asset' }),
    affiliate: Type.String({ description: "The affiliate's address" }),
    amount: BaseUnits('Base units of the asset: the fee earned (credit) or the claim paid (debit)'),
    amount_usd: Type.String({ description: 'USD at the current price, two decimals' }),
    type: Type.Union([Type.Literal('credit'), Type.Literal('debit')], {
      description: "credit: a fee of one of the app's orders; debit: a claim the claim contract paid the affiliate",
    }),
    id: Type.String({ description: 'The order id for a credit, the claim transaction hash for a debit' }),
    timestamp: Type.String({ description: "RFC 3339, seconds, UTC: when the fee accrued, or the claim's block time" }),
  },
  { $id: 'AffiliateHistoryItem' },
);

export const PaginatedAffiliateHistory = Type.Object(
  {
    data: Type.Array(Type.Ref('AffiliateHistoryItem'), { description: 'Newest first' }),
    total_earned: Type.String({ description: "USD of every credit (all pages), each asset's sum at its current price" }),
    total_claimed: Type.String({ description: 'USD of every debit (all pages), each asset\'s sum at its current price' }),
    page: Type.Integer({ description: 'This page, from 1' }),
    total_pages: Type.Integer({ description: 'ceil(total_items / per_page); 0 when there is no entry' }),
    total_items: Type.Integer({ description: 'Credits and debits' }),
    per_page: Type.Integer(),
  },
  { $id: 'PaginatedAffiliateHistory' },
);

export const PriceQuote = Type.Object(
  {
    solver_id: Type.String(),
    source: Type.Ref('AmountView'),
    destination: Type.Ref('AmountView'),
    fee: Type.Integer({ description: 'Solver fee in bips' }),
    fixed_fee: Type.String({ description: 'Fixed fee in USD' }),
    slippage: Type.Integer({ description: 'Bips' }),
    estimated_time: Type.Integer({ description: 'Seconds' }),
  },
  { $id: 'PriceQuote' },
);

export const CreatedOrder = Type.Object(
  {
    order_id: Type.String(),
    to: Type.Optional(Type.String({ description: 'EVM/Tron: the HTLC contract; Bitcoin family: the HTLC address to pay' })),
    amount: Type.Optional(Type.String({ description: 'Base units to lock' })),
    typed_data: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'EIP-712 (EVM, Tron) or SNIP-12 (Starknet) data to sign for gasless initiation; null without gasless' })),
    approval_transaction: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    initiate_transaction: Type.Optional(Type.Object({}, { additionalProperties: true })),
    versioned_tx: Type.Optional(Type.String({ description: 'Solana: base64 unsigned v0 transaction, the client pays fees' })),
    versioned_tx_gasless: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Solana SPL: the relayer pays fees' })),
  },
  { $id: 'CreatedOrder', additionalProperties: true },
);

export const Health = Type.Object(
  {
    status: Type.String(),
    result: Type.Object({
      database: Type.String(),
      version: Type.String(),
      chains: Type.Optional(
        Type.Array(
          Type.Object({
            chain: Type.String(),
            status: Type.Literal('degraded'),
            since: Type.String(),
            error: Type.String(),
            checks: Type.Optional(
              Type.Array(Type.Object({ check: Type.String(), detail: Type.String() }), {
                description: "the chain's failing preflight checks (hashlock preflight's: chain id, contract code, decimals, balances against their minimums, clock), run every minute",
              }),
            ),
          }),
          { description: 'Chains whose node this instance has not reached for longer than 30 s, or whose preflight checks fail; the service waits for them and is still live' },
        ),
      ),
    }),
  },
  { $id: 'Health' },
);

/** Shared schemas registered once with Fastify (referenced by $ref). */
export const SHARED_SCHEMAS = [
  ErrorEnvelope,
  QuoteError,
  AmountView,
  AssetV2,
  AssetV3,
  Chain,
  ChainV2,
  RoutePolicy,
  Swap,
  AffiliateFee,
  Order,
  PaginatedOrders,
  TxRequest,
  StarknetCall,
  Initiate,
  Quote,
  LiquidityEntry,
  SolverRecordView,
  Liquidity,
  EarningsEntry,
  AffiliateHistoryItem,
  PaginatedAffiliateHistory,
  PriceQuote,
  CreatedOrder,
  Health,
];

export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [c, Type.Ref('ErrorEnvelope')]));
