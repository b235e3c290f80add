import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { chainAdapter } from '../../chains/adapters.ts';
import type { Asset } from '../../chains/registry.ts';
import { AppError, invalid, notFound, shown, type ErrorCode } from '../../errors.ts';
import {
  aggregatorFees,
  aggregatorOrder,
  aggregatorQuote,
  aggregatorState,
  aggregatorSteps,
  orderIdOf,
  PROVIDER,
  rfc3339,
  stateWithSteps,
} from '../../orders/aggregator-view.ts';
import { statusClock } from '../../orders/heights-cache.ts';
import { MAX_SLIPPAGE_BIPS } from '../../orders/limits.ts';
import { orderStatus } from '../../orders/status.ts';
import { toUsd } from '../../pricing/amounts.ts';
import type { SolverQuote } from '../../pricing/quote.ts';
import { aggregatorExtras, aggregatorOrderPage, findAggregatorQuote, recordAggregatorQuote, recordDeposit } from '../../store/aggregator.ts';
import type { App } from '../../store/apps.ts';
import { requestChainIndex } from '../../store/index-requests.ts';
import { findOrder, type OrderRecord } from '../../store/orders.ts';
import {
  AggregatorEstimateQuery,
  AggregatorListQuery,
  AggregatorQuoteRequest,
  AggregatorReadQuery,
  AggregatorSubmitRequest,
  aggregatorErrors,
  checked,
} from '../aggregator-schemas.ts';
import { requestKey } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { aggregatorQuery, markAggregatorRequest } from '../errors.ts';

/**
 * Garden's Aggregator API (its `openapi-v3.yaml`, with `/v3` paths) with this service as its one
 * provider. `GET /v3/registry`, `/v3/routes` and `POST /v3/orders/{id}/submit` are its own paths; on
 * the paths it shares with the v3 draft (`POST /v3/quote`, `GET /v3/estimate`, `GET /v3/orders`,
 * `GET /v3/orders/{id}`) the draft's routes hand a request over to it (`isAggregator*` below).
 */

/** Keys of a request body that only the Aggregator's `POST /v3/quote` has. */
const QUOTE_FIELDS = ['sell_asset', 'buy_asset', 'trade_type', 'sell_address', 'buy_address', 'slippage_bps', 'allow_providers', 'exclude_providers'];
/** Query parameters that only the Aggregator's `GET /v3/estimate` has. */
const ESTIMATE_PARAMS = ['sell_asset', 'buy_asset', 'amount', 'trade_type', 'slippage_bps', 'allow_providers', 'exclude_providers'];
/** The v3 draft's order-list parameters: any of them makes `GET /v3/orders` the draft's list. */
const DRAFT_LIST_PARAMS = new Set(['page', 'per_page', 'status', 'address', 'from_chain', 'to_chain', 'from_owner', 'to_owner', 'integrator', 'from', 'to']);

const has = (object: unknown, keys: readonly string[]): boolean =>
  typeof object === 'object' && object !== null && keys.some((k) => Object.prototype.hasOwnProperty.call(object, k));

/** `POST /v3/quote` is the Aggregator's when the body has its fields and none of the draft's legs. */
export const isAggregatorQuote = (body: unknown): boolean => has(body, QUOTE_FIELDS) && !has(body, ['source', 'destination']);
export const isAggregatorEstimate = (query: unknown): boolean => has(query, ESTIMATE_PARAMS);
/** `GET /v3/orders` is the draft's when its query names one of the draft's parameters, else the Aggregator's. */
export const isAggregatorList = (query: unknown): boolean => !Object.keys((query ?? {})).some((k) => DRAFT_LIST_PARAMS.has(k));

const QUOTE_REFUSALS = new Set<ErrorCode>(['amount_out_of_range', 'insufficient_liquidity', 'no_route', 'route_refused', 'slippage_exceeded', 'not_supported']);

const providerError = (code: string, message: string) => ({ provider: PROVIDER, code, message });

/** Whether the provider lists leave this service asked. */
function asked(allow: readonly string[] | undefined, exclude: readonly string[] | undefined): boolean {
  return (allow === undefined || allow.includes(PROVIDER)) && !(exclude ?? []).includes(PROVIDER);
}

const commaList = (value: string | undefined) => (value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter((s) => s !== ''));

const cacheHeaders = (reply: FastifyReply, keyed: boolean, maxAge: number) =>
  reply.header('cache-control', `${keyed ? 'private' : 'public'}, max-age=${maxAge}`).header('vary', 'garden-app-id');

/** Canonical JSON (keys sorted): the same body hashes the same whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface Cursor {
  createdAt: string;
  orderId: string;
}

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify([c.createdAt, c.orderId])).toString('base64url');

function decodeCursor(value: string): Cursor {
  try {
    const [createdAt, orderId] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?[+-]\d\d(:\d\d)?$/.test(createdAt) && typeof orderId === 'string' && /^[0-9a-f]{64}$/.test(orderId)) {
      return { createdAt, orderId };
    }
  } catch {
    // Reported below.
  }
  throw invalid("invalid query parameter 'cursor': not a next_cursor this service gave");
}

export interface AggregatorRoutes {
  quote(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  estimate(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  list(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  read(request: FastifyRequest, reply: FastifyReply, id: string): Promise<unknown>;
  /** onRequest of a route whose key is optional: a key that is sent must be valid. */
  optionalKey(request: FastifyRequest): Promise<App | undefined>;
}

/** Registers the Aggregator's own paths and returns the handlers the shared paths hand over to. */
export function aggregatorRoutes(app: FastifyInstance, ctx: ApiContext): AggregatorRoutes {
  const { db, registry, quoter, auth, events } = ctx;
  const startedAt = rfc3339(Math.floor(ctx.clock.now() / 1000));
  const offered = (asset: Asset | undefined): asset is Asset => asset !== undefined && chainAdapter(asset.chain)?.aggregator !== undefined;

  const optionalKey = async (request: FastifyRequest): Promise<App | undefined> => {
    const key = requestKey(request);
    if (key === undefined) return undefined;
    const found = await auth.resolve(key);
    if (!found) throw new AppError('unauthorized', 'Send a valid key in the garden-app-id header.');
    request.app = found;
    return found;
  };

  const assetOf = (field: string, id: string): Asset => {
    const asset = registry.asset(id.toLowerCase());
    if (!asset) throw invalid(`invalid ${field}: unknown asset ${shown(id)}; see GET /v3/registry`);
    return asset;
  };

  /** The order as the Aggregator shows it, its steps built for `app` (a signature step only for its own gasless app). */
  const orderView = async (order: OrderRecord, app: App | undefined) => {
    const now = await statusClock(db, ctx.clock);
    const extras = await aggregatorExtras(db, order.id);
    const derived = aggregatorState(order, orderStatus(order, now), now);
    // A reported deposit or a relayed signature: the provider's turn until the chain shows it.
    const reported = derived.next === 'fund' && (extras.deposits.length > 0 || extras.initiateQueued);
    const { state, next } = reported ? { state: 'awaiting_provider' as const, next: 'none' as const } : derived;
    const gasless = app !== undefined && app.id === order.appId && app.gasless;
    const steps = await aggregatorSteps(order, registry, next, { gasless, ...(ctx.signingOptions ? { signing: ctx.signingOptions } : {}) }).catch(() => []);
    return aggregatorOrder(order, registry, { state: stateWithSteps(state, steps), steps, extras, nowUnix: now.unixSeconds });
  };

  const quoteView = async (order: OrderRecord, app: App, exactOut: boolean) => {
    const steps = await aggregatorSteps(order, registry, 'fund', { gasless: app.gasless, ...(ctx.signingOptions ? { signing: ctx.signingOptions } : {}) });
    return aggregatorQuote(order, registry, steps, exactOut);
  };

  /** The quote's refusal by the pricing, as a provider error with the Aggregator's code. */
  const refusal = (err: unknown, from: Asset, to: Asset, amount: bigint) => {
    if (!(err instanceof AppError) || !QUOTE_REFUSALS.has(err.code)) throw err;
    if (err.code === 'amount_out_of_range') {
      const route = quoter.routes().find((r) => r.from.id === from.id && r.to.id === to.id);
      return providerError(route && amount > route.max ? 'amount_above_maximum' : 'amount_below_minimum', err.message);
    }
    return providerError(err.code === 'route_refused' || err.code === 'not_supported' ? 'no_route' : err.code, err.message);
  };

  const estimateOf = (q: SolverQuote, from: Asset, to: Asset, slippage: number, exactOut: boolean) => {
    const bips = BigInt(slippage);
    const fakeOrder = {
      source: { asset: from.id, amount: q.sourceAmount.toString() },
      quote: { sourcePrice: q.sourcePrice, feeBips: q.strategy.feeBips, fixedFee: q.strategy.fixedFeeUsd },
      affiliateFees: [],
    } as unknown as OrderRecord;
    return {
      provider: PROVIDER,
      sell_asset: from.id,
      sell_amount: q.sourceAmount.toString(),
      ...(exactOut ? { max_sell_amount: ((q.sourceAmount * (10_000n + bips)) / 10_000n).toString() } : {}),
      buy_asset: to.id,
      buy_amount: q.destinationAmount.toString(),
      min_buy_amount: (exactOut ? q.destinationAmount : (q.destinationAmount * (10_000n - bips)) / 10_000n).toString(),
      estimated_seconds: q.strategy.estimatedTime,
      fees: aggregatorFees(fakeOrder, registry),
      price: { sell_usd: toUsd(q.sourceAmount, from.decimals, q.sourcePrice), buy_usd: toUsd(q.destinationAmount, to.decimals, q.destinationPrice) },
      warnings: [],
    };
  };

  app.get(
    '/v3/registry',
    {
      schema: {
        summary: 'Aggregator API: supported chains and assets',
        description:
          'Every chain whose family the Aggregator API settles, with its assets; `disabled` when the registry marks ' +
          'it inactive. The key is optional; a key that is sent must be valid.',
        tags: ['aggregator'],
        response: { 200: Type.Ref('AggregatorRegistry'), ...aggregatorErrors(401, 429) },
      },
    },
    async (request, reply) => {
      markAggregatorRequest(request);
      const keyed = (await optionalKey(request)) !== undefined;
      const chains = registry.chains.flatMap((chain) => {
        const family = chainAdapter(chain)?.aggregator;
        if (!family || chain.assets.length === 0) return [];
        const chainId = family.chainId?.(chain);
        return [
          {
            id: chain.key,
            name: chain.name,
            vm_type: family.vmType,
            ...(chainId !== undefined ? { chain_id: chainId } : {}),
            explorer_url: chain.explorerUrl,
            logo_url: chain.icon === '' ? null : chain.icon,
            disabled: !chain.isActive,
            assets: chain.assets.map((a) => ({
              id: a.id,
              token: a.token.address === '' || a.token.schema.endsWith(':native') ? { type: 'native' } : { type: 'contract', address: a.token.address },
              symbol: a.symbol.toUpperCase(),
              name: a.name,
              decimals: a.decimals,
              logo_url: a.icon === '' ? null : a.icon,
              disabled: !chain.isActive || !a.isActive,
            })),
          },
        ];
      });
      return cacheHeaders(reply, keyed, 3600).send({ updated_at: startedAt, chains });
    },
  );

  app.get<{ Querystring: { sell_asset?: string; buy_asset?: string } }>(
    '/v3/routes',
    {
      schema: {
        summary: 'Aggregator API: routable pairs of an asset',
        description: 'Give `sell_asset`, `buy_asset` or both. Each pair with the widest source range the solvers accept.',
        tags: ['aggregator'],
        querystring: Type.Object({ sell_asset: Type.Optional(Type.String({ maxLength: 256 })), buy_asset: Type.Optional(Type.String({ maxLength: 256 })) }),
        response: { 200: Type.Ref('AggregatorRoutes'), ...aggregatorErrors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      markAggregatorRequest(request);
      const keyed = (await optionalKey(request)) !== undefined;
      const { sell_asset: sell, buy_asset: buy } = request.query;
      if (sell === undefined && buy === undefined) throw invalid('Give at least one of sell_asset or buy_asset.');
      const routes = quoter
        .routes()
        .filter((r) => offered(r.from) && offered(r.to) && r.from.isActive && r.to.isActive)
        .filter((r) => (sell === undefined || r.from.id === sell.toLowerCase()) && (buy === undefined || r.to.id === buy.toLowerCase()))
        .map((r) => ({ sell_asset: r.from.id, buy_asset: r.to.id, min_sell_amount: r.min.toString(), max_sell_amount: r.max.toString() }));
      return cacheHeaders(reply, keyed, 300).send({ updated_at: startedAt, routes });
    },
  );

  app.post<{ Params: { order: string }; Body: unknown }>(
    '/v3/orders/:order/submit',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'Aggregator API: report the transaction that funded the swap',
        description:
          '`{tx_hash}` after a `transaction` or `deposit` step: the source chain is looked at now (its watcher finds ' +
          'the transaction on its own within a block time). `{signature}` after a `signature` step: the gasless ' +
          'initiate, which the service sends. 422 `provider_rejected` for a hash that is no transaction on the source ' +
          'chain, or an order that takes no deposit any more. Answers the order as it now stands.',
        tags: ['aggregator'],
        params: Type.Object({ order: Type.String({ maxLength: 100 }) }),
        body: Type.Unknown(),
        documentedBody: AggregatorSubmitRequest,
        response: { 200: Type.Ref('AggregatorOrder'), ...aggregatorErrors(400, 401, 404, 409, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      markAggregatorRequest(request);
      const body = checked(AggregatorSubmitRequest, request.body, 'body field');
      if ((body.tx_hash === undefined) === (body.signature === undefined)) throw invalid('tx_hash is required.');
      const orderId = orderIdOf(request.params.order);
      const order = orderId && (await ctx.orders.get(orderId));
      if (!order) throw notFound('No such order.');
      const now = await statusClock(db, ctx.clock);
      const { state } = aggregatorState(order, orderStatus(order, now), now);
      if (state === 'completed' || state === 'refunded' || state === 'failed') {
        throw new AppError('provider_rejected', `the order is ${state}: it takes no deposit`);
      }
      if (body.signature !== undefined) {
        if (!ctx.orderActions) throw new AppError('unavailable', 'the service relays no signature now: no relayer is configured');
        await ctx.orderActions.perform(request.app!, order.id, 'initiate', { signature: body.signature });
      } else {
        const txHash = body.tx_hash!.trim();
        const chain = registry.chain(order.source.chain);
        if (!chain || chainAdapter(chain)?.txHashMatchKey(txHash) === undefined) {
          throw new AppError('provider_rejected', `${shown(txHash)} is not a transaction hash on ${order.source.chain}`);
        }
        await recordDeposit(db, order.id, txHash);
        await requestChainIndex(db, chain.key);
        events.wake(order.id);
      }
      const fresh = (await findOrder(db, order.id)) ?? order;
      return reply.header('cache-control', 'no-store').send(await orderView(fresh, request.app));
    },
  );

  return {
    optionalKey,

    async quote(request, reply) {
      markAggregatorRequest(request);
      const body = checked(AggregatorQuoteRequest, request.body, 'body field');
      const header = request.headers['idempotency-key'];
      const key = (Array.isArray(header) ? header[0] : header)?.trim();
      if (!key) throw invalid('The Idempotency-Key header is required (a UUID you generate for this request).');
      if (!/^[\x21-\x7e]{1,100}$/.test(key)) throw invalid('invalid header \'Idempotency-Key\': must be 1 to 100 printable characters, e.g. a UUID');
      const app = request.app!;
      const requestHash = createHash('sha256').update(canonical(body)).digest('hex');
      const exactOut = body.trade_type === 'exact_out';
      const reply200 = (answer: object) => reply.header('x-request-id', request.id).send(answer);

      const replay = async (orderId: string) => {
        const order = (await findOrder(db, orderId))!;
        return reply200({ quotes: [await quoteView(order, app, exactOut)], provider_errors: [] });
      };
      const existing = await findAggregatorQuote(db, app.id, key);
      if (existing) {
        if (existing.requestHash !== requestHash) throw new AppError('idempotency_key_reuse', 'This Idempotency-Key was used with a different request.');
        return replay(existing.orderId);
      }
      if (!asked(body.allow_providers, body.exclude_providers)) return reply200({ quotes: [], provider_errors: [] });

      const from = assetOf("body field 'sell_asset'", body.sell_asset);
      const to = assetOf("body field 'buy_asset'", body.buy_asset);
      if (from.id === to.id) throw invalid("invalid body field 'buy_asset': must differ from sell_asset");
      const amount = BigInt(body.amount);
      if (!offered(from) || !offered(to) || !from.isActive || !to.isActive) {
        return reply200({ quotes: [], provider_errors: [providerError('no_route', `no route for ${from.id} -> ${to.id}`)] });
      }
      let orderId: string;
      try {
        const [best] = await quoter.quote({ from, to, ...(exactOut ? { toAmount: amount } : { fromAmount: amount }), affiliateFeeBips: 0 });
        const { result } = await ctx.orderCreator
          .create(
            app,
            {
              source: { asset: from.id, owner: body.sell_address, amount: best!.sourceAmount.toString() },
              destination: { asset: to.id, owner: body.buy_address, amount: best!.destinationAmount.toString() },
              slippage: Math.min(body.slippage_bps ?? 100, MAX_SLIPPAGE_BIPS),
              nonce: `aggregator:${key}`,
            },
            'v3',
          )
          .catch((err: unknown) => {
            if (err instanceof AppError && err.code === 'conflict' && err.message.startsWith('nonce:')) {
              throw new AppError('idempotency_key_reuse', 'This Idempotency-Key was used with a different request.');
            }
            if (err instanceof AppError && err.code === 'invalid_request') throw invalid(inAggregatorTerms(err.message));
            throw err;
          });
        orderId = String(result.order_id);
      } catch (err) {
        // A concurrent request with the same key may have made its order meanwhile.
        const raced = await findAggregatorQuote(db, app.id, key);
        if (raced && raced.requestHash === requestHash) return replay(raced.orderId);
        return reply200({ quotes: [], provider_errors: [refusal(err, from, to, amount)] });
      }
      const stored = await recordAggregatorQuote(db, app.id, key, { requestHash, orderId });
      if (stored.requestHash !== requestHash) throw new AppError('idempotency_key_reuse', 'This Idempotency-Key was used with a different request.');
      return replay(stored.orderId);
    },

    async estimate(request, reply) {
      markAggregatorRequest(request);
      const keyed = (await optionalKey(request)) !== undefined;
      const q = checked(AggregatorEstimateQuery, aggregatorQuery(request), 'query parameter');
      const headers = () => cacheHeaders(reply, keyed, 5).header('x-request-id', request.id);
      if (!asked(commaList(q.allow_providers), commaList(q.exclude_providers))) return headers().send({ estimates: [], provider_errors: [] });
      const from = assetOf("query parameter 'sell_asset'", q.sell_asset);
      const to = assetOf("query parameter 'buy_asset'", q.buy_asset);
      if (from.id === to.id) throw invalid("invalid query parameter 'buy_asset': must differ from sell_asset");
      const amount = BigInt(q.amount);
      const exactOut = q.trade_type === 'exact_out';
      if (!offered(from) || !offered(to) || !from.isActive || !to.isActive) {
        return headers().send({ estimates: [], provider_errors: [providerError('no_route', `no route for ${from.id} -> ${to.id}`)] });
      }
      try {
        const [best] = await quoter.quote({ from, to, ...(exactOut ? { toAmount: amount } : { fromAmount: amount }), affiliateFeeBips: 0 });
        return headers().send({ estimates: [estimateOf(best!, from, to, q.slippage_bps ?? 100, exactOut)], provider_errors: [] });
      } catch (err) {
        return headers().send({ estimates: [], provider_errors: [refusal(err, from, to, amount)] });
      }
    },

    async list(request, reply) {
      markAggregatorRequest(request);
      const q = checked(AggregatorListQuery, aggregatorQuery(request), 'query parameter');
      const limit = q.limit ?? 20;
      const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      const rows = await aggregatorOrderPage(db, { appId: request.app!.id, limit: limit + 1, ...(after ? { after } : {}), ...(q.tx_hash ? { txHash: q.tx_hash.trim() } : {}) });
      const page = rows.slice(0, limit);
      const orders = [];
      for (const row of page) {
        const order = await ctx.orders.get(row.orderId);
        if (order) orders.push(await orderView(order, request.app));
      }
      const last = page.at(-1);
      const next = rows.length > limit && last ? { next_cursor: encodeCursor(last) } : {};
      return reply.header('cache-control', 'no-store').send({ orders, ...next });
    },

    async read(request, reply, id) {
      markAggregatorRequest(request);
      const { wait = 0 } = checked(AggregatorReadQuery, aggregatorQuery(request), 'query parameter');
      const orderId = orderIdOf(id);
      if (!orderId) throw notFound('No such order.');
      // Listen before reading, so an event recorded between the read and the wait still wakes it.
      const abort = new AbortController();
      const woke = wait > 0 ? events.nextEventOf(orderId, wait * 1000, abort.signal) : undefined;
      const closed = () => abort.abort();
      reply.raw.once('close', closed);
      try {
        const order = await ctx.orders.get(orderId);
        if (!order) throw notFound('No such order.');
        let view = await orderView(order, request.app);
        const terminal = view.state === 'completed' || view.state === 'refunded' || view.state === 'failed';
        if (woke && !terminal && (await woke)) {
          const fresh = await findOrder(db, orderId);
          if (fresh) view = await orderView(fresh, request.app);
        }
        return reply.header('cache-control', 'no-store').send(view);
      } finally {
        abort.abort();
        reply.raw.off('close', closed);
      }
    },
  };
}

/** OrderCreator's field names in the Aggregator's terms. */
function inAggregatorTerms(message: string): string {
  const named = message
    .replace(/^source\.owner:/, "invalid body field 'sell_address':")
    .replace(/^destination\.owner:/, "invalid body field 'buy_address':")
    .replace(/^(source|destination)\.amount:/, "invalid body field 'amount':")
    .replace(/^source\.asset:/, "invalid body field 'sell_asset':")
    .replace(/^destination\.asset:/, "invalid body field 'buy_asset':");
  return named;
}
