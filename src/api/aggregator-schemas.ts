import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { invalid } from '../errors.ts';
import { describeIssues } from '../validation-issue.ts';

/**
 * The Aggregator API's shapes (Garden's `openapi-v3.yaml`, garden-aggregator 3.0.0, the version with
 * `/v3` paths): requests checked here, answers documented in the OpenAPI document.
 */

const BaseUnits = Type.String({ pattern: '^[1-9][0-9]{0,77}$', errorMessage: 'must be a whole number of base units, above 0, as a string' });
const AssetId = Type.String({ minLength: 1, maxLength: 256, description: '`<chain>:<symbol>`, from GET /v3/registry' });
const TradeType = Type.String({ enum: ['exact_in', 'exact_out'], description: '`exact_in` or `exact_out`' });
const Slippage = Type.Integer({ minimum: 0, maximum: 10_000, default: 100, description: 'Basis points' });
const Providers = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 });

export const AggregatorQuoteRequest = Type.Object(
  {
    sell_asset: AssetId,
    buy_asset: AssetId,
    amount: BaseUnits,
    trade_type: TradeType,
    sell_address: Type.String({ minLength: 1, maxLength: 256, description: 'Where the user sends from, on the source chain' }),
    buy_address: Type.String({ minLength: 1, maxLength: 256, description: 'Where the user receives, on the destination chain' }),
    slippage_bps: Type.Optional(Slippage),
    allow_providers: Type.Optional(Providers),
    exclude_providers: Type.Optional(Providers),
  },
  { additionalProperties: false },
);

export const AggregatorEstimateQuery = Type.Object(
  {
    sell_asset: AssetId,
    buy_asset: AssetId,
    amount: BaseUnits,
    trade_type: TradeType,
    slippage_bps: Type.Optional(Slippage),
    allow_providers: Type.Optional(Type.String({ maxLength: 1000, description: 'Comma separated' })),
    exclude_providers: Type.Optional(Type.String({ maxLength: 1000, description: 'Comma separated' })),
  },
  { additionalProperties: false },
);

export const AggregatorListQuery = Type.Object(
  {
    tx_hash: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only the orders this transaction funded; case is ignored' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: "The previous page's `next_cursor`" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

export const AggregatorReadQuery = Type.Object(
  { wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 25, description: 'Seconds to hold the request while `updated_at` is unchanged' })) },
  { additionalProperties: false },
);

export const AggregatorSubmitRequest = Type.Object(
  {
    tx_hash: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The transaction that funded the source; case is ignored' })),
    signature: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: "A `signature` step's signature: the gasless initiate, which the service sends" }),
    ),
  },
  { additionalProperties: false },
);

// One validator for requests whose path is shared with the v3 draft: the route tells the two apart first.
const ajv = new Ajv({ strict: false, verbose: true, allErrors: false, useDefaults: true });
const bodyAjv = ajv;
const queryAjv = new Ajv({ strict: false, verbose: true, allErrors: false, useDefaults: true, coerceTypes: true });
const compiled = new WeakMap<TSchema, ReturnType<Ajv['compile']>>();

/** `value` checked against `schema` (defaults filled in, a query's numbers coerced), or 400 naming the field. */
export function checked<T extends TSchema>(schema: T, value: unknown, where: 'body field' | 'query parameter'): Static<T> {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = (where === 'body field' ? bodyAjv : queryAjv).compile(schema)));
  const copy = value === undefined || value === null ? (where === 'body field' ? value : {}) : structuredClone(value);
  if (where === 'body field' && (copy === null || typeof copy !== 'object' || Array.isArray(copy))) throw invalid('invalid body: must be a JSON object');
  if (!validate(copy)) {
    const described = describeIssues(validate.errors ?? []);
    throw invalid(described ? `invalid ${where} '${described.field}': ${described.problem}` : `invalid ${where}`);
  }
  return copy;
}

// Answers, for the OpenAPI document.
const Fee = Type.Object(
  {
    type: Type.String({ description: '`provider` (the solver) or `integrator` (an affiliate fee)' }),
    asset: Type.String(),
    amount: Type.String({ description: 'Base units of `asset`' }),
    amount_usd: Type.Optional(Type.String()),
  },
  { $id: 'AggregatorFee' },
);
const Price = Type.Object({ sell_usd: Type.Optional(Type.String()), buy_usd: Type.Optional(Type.String()), impact_bps: Type.Optional(Type.Integer()) }, { $id: 'AggregatorPrice' });
const Warning = Type.Object({ code: Type.String(), message: Type.String() }, { $id: 'AggregatorWarning' });
const ProviderError = Type.Object({ provider: Type.String(), code: Type.String(), message: Type.String() }, { $id: 'AggregatorProviderError' });
const Step = Type.Object(
  {
    id: Type.String({ description: '`approve`, `initiate`, `refund`; an id can repeat' }),
    kind: Type.String({ description: '`deposit`, `transaction` or `signature`' }),
    action: Type.String(),
    description: Type.Optional(Type.String()),
    deposit: Type.Optional(Type.Object({ chain: Type.String(), address: Type.String(), amount: Type.String(), memo: Type.Optional(Type.String()) })),
    data: Type.Optional(Type.Object({ chain: Type.String() }, { additionalProperties: true, description: "The chain's own payload" })),
  },
  { $id: 'AggregatorStep' },
);
const common = {
  provider: Type.String({ description: 'Always `hashlock`' }),
  sell_asset: Type.String(),
  sell_amount: Type.String(),
  buy_asset: Type.String(),
  buy_amount: Type.String(),
  min_buy_amount: Type.String({ description: 'The HTLC pays exactly `buy_amount`: the same' }),
  estimated_seconds: Type.Optional(Type.Integer()),
  fees: Type.Array(Type.Ref('AggregatorFee')),
  price: Type.Optional(Type.Ref('AggregatorPrice')),
};
const Quote = Type.Object(
  {
    id: Type.String({ description: '`ord_` and the order id' }),
    created_at: Type.String({ format: 'date-time' }),
    deposit_by: Type.String({ format: 'date-time', description: "The order's deadline" }),
    max_sell_amount: Type.Optional(Type.String()),
    steps: Type.Array(Type.Ref('AggregatorStep')),
    ...common,
  },
  { $id: 'AggregatorQuote' },
);
const Order = Type.Object(
  {
    id: Type.String(),
    state: Type.String({ description: '`awaiting_user`, `awaiting_provider`, `completed`, `refunded` or `failed`' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    deposits: Type.Array(Type.Object({ tx_hash: Type.String(), amount: Type.Optional(Type.String()), at: Type.String({ format: 'date-time' }) })),
    received: Type.Union([Type.Object({ amount: Type.String(), tx: Type.String() }), Type.Null()]),
    steps: Type.Array(Type.Ref('AggregatorStep')),
    warnings: Type.Array(Type.Ref('AggregatorWarning')),
    failure: Type.Optional(Type.Object({ code: Type.String(), message: Type.String(), refund_failed: Type.Boolean() })),
    last_verified_at: Type.String({ format: 'date-time' }),
    ...common,
  },
  { $id: 'AggregatorOrder' },
);
const Estimate = Type.Object(
  { max_sell_amount: Type.Optional(Type.String()), warnings: Type.Array(Type.Ref('AggregatorWarning')), ...common },
  { $id: 'AggregatorEstimate' },
);
const TokenRef = Type.Object({ type: Type.String({ description: '`native` or `contract`' }), address: Type.Optional(Type.String()) });
const RegistryAsset = Type.Object({
  id: Type.String(),
  token: TokenRef,
  symbol: Type.String(),
  name: Type.String(),
  decimals: Type.Integer(),
  logo_url: Type.Union([Type.String(), Type.Null()]),
  disabled: Type.Boolean(),
});
const RegistryChain = Type.Object({
  id: Type.String({ description: 'The chain key' }),
  name: Type.String(),
  vm_type: Type.String({ description: '`evm`, `bvm`, `svm`, `tvm`' }),
  chain_id: Type.Optional(Type.String()),
  explorer_url: Type.String(),
  logo_url: Type.Union([Type.String(), Type.Null()]),
  disabled: Type.Boolean(),
  assets: Type.Array(RegistryAsset),
});

export const AggregatorError = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable; `invalid_key` for a missing or unknown key, else the codes of docs/api.md' }),
      message: Type.String(),
      retryable: Type.Boolean(),
      details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  },
  { $id: 'AggregatorError' },
);

export const AGGREGATOR_SCHEMAS = [
  Fee,
  Price,
  Warning,
  ProviderError,
  Step,
  Quote,
  Order,
  Estimate,
  AggregatorError,
  Type.Object({ updated_at: Type.String({ format: 'date-time' }), chains: Type.Array(RegistryChain) }, { $id: 'AggregatorRegistry' }),
  Type.Object(
    {
      updated_at: Type.String({ format: 'date-time' }),
      routes: Type.Array(
        Type.Object({ sell_asset: Type.String(), buy_asset: Type.String(), min_sell_amount: Type.Optional(Type.String()), max_sell_amount: Type.Optional(Type.String()) }),
      ),
    },
    { $id: 'AggregatorRoutes' },
  ),
  Type.Object({ estimates: Type.Array(Type.Ref('AggregatorEstimate')), provider_errors: Type.Array(Type.Ref('AggregatorProviderError')) }, { $id: 'AggregatorEstimates' }),
  Type.Object({ quotes: Type.Array(Type.Ref('AggregatorQuote')), provider_errors: Type.Array(Type.Ref('AggregatorProviderError')) }, { $id: 'AggregatorQuotes' }),
  Type.Object({ orders: Type.Array(Type.Ref('AggregatorOrder')), next_cursor: Type.Optional(Type.String()) }, { $id: 'AggregatorOrders' }),
];

/** Error answers of Aggregator routes, for the document. */
export const aggregatorErrors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Type.Ref('AggregatorError')]));
