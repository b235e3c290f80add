import { Type } from '@sinclair/typebox';
import { MAX_SLIPPAGE_BIPS } from '../orders/limits.ts';
import { V3_ORDER_STATUSES } from '../orders/v3-order-view.ts';
import { FailedActions, Quote } from './schemas.ts';

/** Schemas of the v3 API, as Garden's openapi-v3.json shapes them; registered with the shared ones. */

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const BaseUnits = Type.String({ pattern: '^[0-9]{1,78}$', errorMessage: 'must be a string of base units (a whole number)' });

export const V3Order = Type.Object(
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
    status: Type.Union(
      V3_ORDER_STATUSES.map((s) => Type.Literal(s)),
      { description: 'not_initiated, in_progress, completed (the client is paid), expired or refunded' },
    ),
    failed_actions: FailedActions,
  },
  { $id: 'V3Order' },
);

export const V3PaginatedOrders = Type.Object(
  {
    data: Type.Array(Type.Ref('V3Order')),
    page: Type.Integer(),
    total_pages: Type.Integer(),
    total_items: Type.Integer(),
    per_page: Type.Integer(),
  },
  { $id: 'V3PaginatedOrders' },
);

/** The quote POST /v3/quote returns: the quote read's, without its status (the order was created by this call). */
export const V3QuoteView = Type.Omit(Quote, ['status'], { $id: 'V3QuoteView' });

export const V3PostQuoteResponse = Type.Object(
  {
    request_id: Type.String({ description: 'A unique id of this request' }),
    quotes: Type.Array(Type.Ref('V3QuoteView'), { description: 'One quote: the order created, with the best solver that accepted it' }),
  },
  { $id: 'V3PostQuoteResponse' },
);

export const V3EstimateItem = Type.Object(
  {
    source: Type.Ref('AmountView'),
    destination: Type.Ref('AmountView'),
    solver_id: Type.String(),
    estimated_time: Type.Integer({ description: 'Seconds' }),
    slippage: Type.Integer({ description: "Bips: the app's default" }),
    fee: Type.Integer({ description: 'Bips' }),
    fixed_fee: Type.String({ description: 'USD' }),
  },
  { $id: 'V3EstimateItem' },
);

const Leg = (role: string) =>
  Type.Object({
    asset: Type.String({ minLength: 1, maxLength: 256, description: 'Asset id <chain>:<symbol>' }),
    owner: Type.Optional(
      Nullable(Type.String({ maxLength: 256, description: `${role}. Optional on one leg when the other leg's owner is an address here too` })),
    ),
    delegate: Type.Optional(
      Nullable(Type.String({ maxLength: 256, description: 'Bitcoin family: the client x-only key its scripts name (absent: the service holds one)' })),
    ),
    amount: Type.Optional(Nullable(BaseUnits)),
  });

/** `POST /v3/quote`'s body (V3QuoteRequest). */
export const V3QuoteRequest = Type.Object({
  source: Leg('The address that pays on the source'),
  destination: Leg('The address paid on the destination'),
  slippage: Type.Integer({ minimum: 0, maximum: MAX_SLIPPAGE_BIPS, description: 'Bips' }),
  affiliate_fees: Type.Optional(
    Type.Array(
      Type.Object({
        asset: Type.String({ maxLength: 256, description: 'The fee asset' }),
        address: Type.String({ minLength: 1, maxLength: 256, description: 'Affiliate address on the fee asset chain' }),
        fee: Type.Integer({ description: 'Bips of the source amount' }),
      }),
      { maxItems: 16 },
    ),
  ),
  nonce: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'Makes creation idempotent per app' }))),
});

/** `GET /v3/estimate`'s query. */
export const V3EstimateQuery = Type.Object(
  {
    from: Type.String({ minLength: 1, maxLength: 256, description: 'Source asset id' }),
    to: Type.String({ minLength: 1, maxLength: 256, description: 'Destination asset id' }),
    from_amount: Type.Optional(BaseUnits),
    to_amount: Type.Optional(BaseUnits),
  },
  { additionalProperties: false },
);

export const V3_SCHEMAS = [V3Order, V3PaginatedOrders, V3QuoteView, V3PostQuoteResponse, V3EstimateItem];
