import { Type, type Static, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { HexId } from '../api/schemas.ts';
import { V3EstimateQuery, V3QuoteRequest } from '../api/v3-schemas.ts';
import { fieldPath } from '../config/schema-check.ts';
import type { ApiAnswer, ApiClient } from './api-client.ts';

/**
 * A tool of the MCP server: its input is the HTTP API's own schema of what it forwards to, checked
 * before the call, and the call is the API's (so an input the API refuses is refused as it says).
 */
export interface Tool<S extends TObject = TObject> {
  name: string;
  description: string;
  input: S;
  call(api: ApiClient, args: Static<S>): Promise<ApiAnswer>;
}

const tool = <S extends TObject>(t: Tool<S>): Tool => t;

const OrderId = Type.Object({ order_id: HexId }, { additionalProperties: false });
const NoInput = Type.Object({}, { additionalProperties: false });

/** A query string of the defined values. */
const query = (args: Record<string, unknown>): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === 'string' || typeof value === 'number') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
};

export const TOOLS: readonly Tool[] = [
  tool({
    name: 'get_quote',
    description:
      'Price a swap without creating anything: one entry per solver that can fill it, best first. Give `from` and `to` ' +
      '(asset ids <chain>:<symbol>, see get_assets) and exactly one of `from_amount` (what the user sends) and ' +
      '`to_amount` (what the user wants to receive), in base units as a string.',
    input: V3EstimateQuery,
    call: (api, args) => api('GET', `/v3/estimate${query(args)}`),
  }),
  tool({
    name: 'create_order',
    description:
      'Create a swap order (it prices the swap and reserves the solver\'s liquidity). Set `amount` on exactly one leg. ' +
      'Returns the quote with `initiate`: the unsigned transaction(s) the user\'s own wallet signs and sends to fund ' +
      'the source (evm: approval_transaction first when present, then initiate_transaction; solana: versioned_tx; ' +
      'bitcoin: pay `amount` to `to`). This server never signs and never holds a key. After sending, report the ' +
      'transaction with index_initiate and follow the order with get_order_status.',
    input: V3QuoteRequest,
    call: (api, args) => api('POST', '/v3/quote', args),
  }),
  tool({
    name: 'index_initiate',
    description: "Report the transaction that funded an order's source, so the service looks at that chain at once (optional).",
    input: Type.Object({ id: HexId, tx_hash: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
    call: (api, args) => api('POST', '/v3/index', args),
  }),
  tool({
    name: 'get_order_status',
    description: 'An order and its status: not_initiated, in_progress, completed (the user is paid), expired or refunded.',
    input: OrderId,
    call: (api, args) => api('GET', `/v3/orders/${args.order_id}`),
  }),
  tool({
    name: 'get_order_events',
    description: "An order's recorded status changes, oldest first, with the order as it is now.",
    input: OrderId,
    call: (api, args) => api('GET', `/explorer/api/orders/${args.order_id}`),
  }),
  tool({
    name: 'get_all_user_orders',
    description:
      "The orders of this app that a user's address is a party of, newest first. `status` filters, comma-separated: " +
      'not_initiated, in_progress, completed, expired, refunded.',
    input: Type.Object(
      {
        address: Type.String({ minLength: 1, maxLength: 200, description: 'The user address, on any chain' }),
        status: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
      },
      { additionalProperties: false },
    ),
    call: (api, args) => api('GET', `/v3/orders${query(args)}`),
  }),
  tool({
    name: 'get_chains',
    description: 'The supported chains, each with its assets, timelocks and confirmation target.',
    input: NoInput,
    call: (api) => api('GET', '/v3/chains'),
  }),
  tool({
    name: 'get_assets',
    description: 'The supported assets with their amount bounds and USD prices; `from` names one asset.',
    input: Type.Object({ from: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, { additionalProperties: false }),
    call: (api, args) => api('GET', `/v3/assets${query(args)}`),
  }),
  tool({
    name: 'get_liquidity',
    description: "The solvers' balances per asset; `virtual_balance` is what new orders can use.",
    input: NoInput,
    call: (api) => api('GET', '/v3/liquidity'),
  }),
  tool({
    name: 'get_policy',
    description: 'The route policy: which asset pairs may be swapped.',
    input: NoInput,
    call: (api) => api('GET', '/v3/policy'),
  }),
];

/** The first problem of `args` against the tool's schema, naming the argument; undefined when they fit. */
export function inputProblem(t: Tool, args: unknown): string | undefined {
  const error = Value.Errors(t.input, args).First();
  if (!error) return undefined;
  return `invalid argument '${fieldPath(error.path)}': ${error.message.toLowerCase()}`;
}

/**
 * A result as an agent sees it: without any `secret` field. Swaps show their secret once it is on chain;
 * an agent has no use for it, and no tool hands one out.
 */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'secret').map(([k, v]) => [k, withoutSecrets(v)]));
}
