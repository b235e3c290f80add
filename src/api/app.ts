import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Counter, Gauge } from 'prom-client';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ClaimSigner } from '../affiliates/claims.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { ChainSigningOptions } from '../chains/chain-access.ts';
import type { Registry } from '../chains/registry.ts';
import { OrderCreator } from '../orders/create-order.ts';
import { EventHub, type EventHubOptions } from '../events/event-hub.ts';
import { OrderCache } from '../orders/order-cache.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import type { SolverConfig } from '../config/service-config.ts';
import type { PriceSource } from '../pricing/price-source.ts';
import { Quoter, type MatchFirst } from '../pricing/quote.ts';
import { QuoteAuction } from '../pricing/quote-auction.ts';
import { RoutePolicy } from '../pricing/route-policy.ts';
import type { Strategy } from '../pricing/strategies.ts';
import { OrderActions, type OrderActionsDeps } from '../relayer/order-actions.ts';
import { sharedLiquidityReads } from '../store/solvers.ts';
import { SolverStanding } from '../solver/solver-standing.ts';
import type { Store } from '../store/database.ts';
import { API_KEY_HEADER, API_KEY_HEADER_ALIAS, ApiKeyAuth } from './auth.ts';
import type { ApiContext } from './context.ts';
import { handleClientError, handleError, handleFrameworkError, handleNotFound } from './errors.ts';
import { registerRateLimits, type RateLimits } from './rate-limit.ts';
import { retryHandlersOnLostConnection } from './lost-connection.ts';
import { InProcessRequests } from './in-process.ts';
import { registerMetrics } from './metrics.ts';
import type { WorkerTiming } from '../worker-timing.ts';
import { registerEngineMetrics } from '../engine/metrics.ts';
import type { NodeHealth } from '../chains/node-health.ts';
import { affiliateHistoryRoutes } from './routes/affiliate-history.ts';
import { earningsRoutes } from './routes/earnings.ts';
import { eventRoutes } from './routes/events.ts';
import { healthRoutes } from './routes/health.ts';
import { liquidityRoutes } from './routes/liquidity.ts';
import { solverApiRoutes } from './routes/solver-api.ts';
import { solverQuoteRoutes } from './routes/solver-quotes.ts';
import { orderListRoutes } from './routes/order-list.ts';
import { orderRoutes } from './routes/orders.ts';
import { orderActionRoutes } from './routes/order-actions.ts';
import { gardenRelayerRoutes } from './routes/garden-relayer.ts';
import { quoteRoutes } from './routes/quotes.ts';
import { createOrderRoutes } from './routes/create-order.ts';
import { policyRoutes } from './routes/policy.ts';
import { schemaRoutes } from './routes/schemas.ts';
import { registryRoutes } from './routes/registry.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { monitoringRoutes } from './routes/monitoring.ts';
import { mcpRoutes } from '../mcp/http.ts';
import { aggregatorRoutes } from './routes/aggregator.ts';
import { v3OrderRoutes } from './routes/v3-orders.ts';
import { v3QuoteRoutes } from './routes/v3-quote.ts';
import { V3_SCHEMAS } from './v3-schemas.ts';
import { AGGREGATOR_SCHEMAS } from './aggregator-schemas.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { explorerRoutes } from '../explorer/routes.ts';

export interface ApiOptions {
  /** Serve /health and /metrics only (`hashlock serve --role workers`): clients are answered by the API instances. */
  operationsOnly?: boolean;
  store: Store;
  /** The time every decision of the API reads (default: the system clock). */
  clock?: Clock;
  /** Which chains' nodes this instance cannot reach (the service's chain workers report to it); shown by /health. */
  nodeHealth?: NodeHealth;
  /** The service's worker passes, timed; shown by /metrics. */
  workerTiming?: WorkerTiming;
  registry: Registry;
  prices: PriceSource;
  /** The solvers' strategies (none: every pair is unknown). */
  strategies?: readonly Strategy[];
  solvers?: readonly SolverConfig[];
  /** Which routes may be quoted and ordered, served by GET /v2/policy (default: every route open). */
  routePolicy?: RoutePolicy;
  /** Encrypts service-held secrets and keys at rest. */
  secrets: SecretBox;
  /** Asset ids affiliate fees may be paid in; the first is the default. */
  affiliateFeeAssets?: readonly string[];
  /** Chain access that building some families' transactions needs (Solana blockhashes, relayers). */
  signingOptions?: ChainSigningOptions;
  /** Chain reads and the solver's keys for the relayed order actions; without it they answer 503. */
  relayer?: OrderActionsDeps;
  /** Affiliate fee claims (the claim_* fields of the earnings read), signed or stored; without it they never appear. */
  claims?: ClaimSigner;
  version: string;
  logger?: FastifyServerOptions['logger'];
  /** How long API-key lookups are remembered. */
  authCacheMs?: number;
  /** Safety bound on how long an order may stay in the read cache (0: no cache). */
  orderCacheMs?: number;
  /** How long the suspended solvers read stays (default 2 s): a suspension or restore applies within it. */
  solverStandingMs?: number;
  /** How long a solver has to fund a destination past the source's confirmations (default 300 s), for its record. */
  solverFundWithinSeconds?: number;
  /** How long registered solvers have to answer a quote request (default 300 ms). */
  solverQuoteDeadlineMs?: number;
  /** The operator's match-first window: chosen registered solvers may take the best price (none by default). */
  solverMatchFirst?: MatchFirst;
  /** Whether apps may register webhook endpoints on loopback, private or link-local addresses (default false). */
  webhooksAllowPrivateAddresses?: boolean;
  /** Order event streams: heartbeat, limits. */
  eventStreams?: EventHubOptions;
  /** Request limits per app and per client address; none without it. */
  rateLimits?: RateLimits;
  /** Which proxies' X-Forwarded-For names the client address (Fastify's trustProxy). */
  trustProxy?: FastifyServerOptions['trustProxy'];
}

/** The most a request body may hold; a larger one gets 413. */
export const BODY_LIMIT_BYTES = 128 * 1024;

const ajvCompilers = AjvCompiler();

/**
 * JSON bodies are validated as sent, never coerced (`false` is no 0, `"1"` no 1); query strings and
 * path parameters are text, so their numbers are coerced.
 */
const validators: BuildCompilerFromPool = (externalSchemas, options) => {
  const coercing = ajvCompilers(externalSchemas, options);
  const strict = ajvCompilers(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } } as typeof options);
  // Fastify calls the compiler with a route definition ({schema, httpPart, ...}), not the bare schema its type names.
  return ((route: { httpPart?: string }) => (route.httpPart === 'body' ? strict : coercing)(route)) as ReturnType<BuildCompilerFromPool>;
};

/** Builds the HTTP API (not listening yet). */
export async function buildApi(options: ApiOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    ajv: { customOptions: { strict: false, verbose: true, allErrors: false } },
    schemaController: { compilersFactory: { buildValidator: validators } },
    // Errors the router raises before a route is chosen (a path parameter too long, a bad URL).
    frameworkErrors: handleFrameworkError,
    // Requests Node's parser refuses (a bad request line, oversized headers) get the envelope too.
    clientErrorHandler: handleClientError,
  });
  const db = options.store.db;
  const clock = options.clock ?? systemClock;
  const auth = new ApiKeyAuth(db, options.authCacheMs, undefined, clock);
  const inProcess = new InProcessRequests();
  const orders = new OrderCache(db, options.orderCacheMs ?? 0, undefined, clock);
  const stopOrderCache = await orders.start(options.store);
  const routePolicy = options.routePolicy ?? RoutePolicy.open();
  const standing = new SolverStanding(db, { ttlMs: options.solverStandingMs, fundWithinSeconds: options.solverFundWithinSeconds, clock });
  // Counted in the metrics once they are registered (below).
  const quoteMetrics: { outcomes?: Counter<'solver' | 'outcome'> } = {};
  const auction = new QuoteAuction({
    deadlineMs: options.solverQuoteDeadlineMs,
    clock,
    onOutcome: (solver, outcome) => quoteMetrics.outcomes?.inc({ solver, outcome }),
  });
  const quoter = new Quoter(options.strategies ?? [], options.prices, sharedLiquidityReads(db), {
    policy: routePolicy,
    suspended: standing.suspended,
    auction,
    ...(options.solverMatchFirst ? { matchFirst: options.solverMatchFirst } : {}),
  });
  app.addHook('onClose', stopOrderCache);
  const events = new EventHub(db, { log: app.log, ...options.eventStreams });
  const stopEvents = await events.start(options.store);
  // Streams end before the server closes, which waits for every open connection.
  app.addHook('preClose', stopEvents);
  const ctx: ApiContext = {
    db,
    clock,
    auction,
    registry: options.registry,
    prices: options.prices,
    auth,
    inProcess,
    orders,
    events,
    quoter,
    standing,
    routePolicy,
    ...(options.signingOptions ? { signingOptions: options.signingOptions } : {}),
    ...(options.claims ? { claims: options.claims } : {}),
    ...(options.relayer ? { orderActions: new OrderActions(db, options.registry, options.relayer) } : {}),
    orderCreator: new OrderCreator({
      db,
      registry: options.registry,
      quoter,
      clock,
      secrets: options.secrets,
    ...(options.nodeHealth ? { nodeHealth: options.nodeHealth } : {}),
      solvers: options.solvers ?? [],
      affiliateFeeAssets: (options.affiliateFeeAssets ?? []).map((id) => options.registry.asset(id)!),
      ...(options.signingOptions ? { signingOptions: options.signingOptions } : {}),
    }),
    secrets: options.secrets,
    ...(options.nodeHealth ? { nodeHealth: options.nodeHealth } : {}),
    webhooksAllowPrivateAddresses: options.webhooksAllowPrivateAddresses ?? false,
    version: options.version,
  };

  // Plain JSON.stringify: the views already have the exact shape, and it beats the schema
  // serializer on these $ref-heavy responses. The schemas still validate input and document output.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  retryHandlersOnLostConnection(app);
  if (options.rateLimits) await registerRateLimits(app, auth, options.rateLimits, inProcess);
  for (const schema of [...SHARED_SCHEMAS, ...V3_SCHEMAS, ...AGGREGATOR_SCHEMAS]) app.addSchema(schema);

  // Routes guarded by the API key say so in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    const hooks = [route.onRequest].flat();
    if (hooks.includes(auth.onRequest)) route.schema = { ...route.schema, security: [{ appId: [] }, { gardenAppId: [] }] };
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Hashlock API',
        version: options.version,
        description:
          'Cross-chain atomic swaps settled as HTLC pairs. Responses use the envelope ' +
          '`{"status":"Ok","result":...}` or `{"status":"Error","error":"...","code":"..."}`; under /v3/quote failures are `{"error":"..."}`.',
      },
      components: {
        securitySchemes: {
          appId: { type: 'apiKey', in: 'header', name: API_KEY_HEADER },
          gardenAppId: { type: 'apiKey', in: 'header', name: API_KEY_HEADER_ALIAS },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}` },
    // A body whose shape depends on what the route looks up (an order action's on the order's family)
    // is checked by the route and only shown here.
    transform: ({ schema, url }) => ({ schema: schema.documentedBody ? { ...schema, body: schema.documentedBody } : schema, url }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  const metrics = registerMetrics(app);
  registerEngineMetrics(metrics, db, options.nodeHealth);
  if (options.workerTiming) metrics.registerMetric(options.workerTiming.passes);
  new Gauge({
    name: 'hashlock_event_streams_open',
    help: 'Open order event streams (Server-Sent Events) on this instance',
    registers: [metrics],
    collect() {
      this.set(events.openStreams);
    },
  });
  quoteMetrics.outcomes = new Counter({
    name: 'hashlock_solver_quote_requests_total',
    help: 'Quote requests sent to registered solvers, by solver and outcome: answered (in time), unanswered, late (an answer refused after the deadline)',
    labelNames: ['solver', 'outcome'],
    registers: [metrics],
  });
  new Gauge({
    name: 'hashlock_solver_quote_streams',
    help: 'Registered solvers with a quote-request stream open on this instance',
    registers: [metrics],
    collect() {
      this.set(auction.connectedSolvers);
    },
  });
  // The solvers' records (read at most every 10 s, a scan of their recent orders); none while the database is out of reach.
  const records = () => standing.records().catch(() => []);
  new Gauge({
    name: 'hashlock_solver_orders',
    help: "Orders of each solver over the last 30 days, by outcome: matched, filled, filled_late, unfilled (a confirmed source not funded in time)",
    labelNames: ['solver', 'outcome'],
    registers: [metrics],
    async collect() {
      for (const r of await records()) {
        for (const [outcome, n] of [['matched', r.matched], ['filled', r.filled], ['filled_late', r.filledLate], ['unfilled', r.unfilled]] as const) this.set({ solver: r.solverId, outcome }, n);
      }
    },
  });
  new Gauge({
    name: 'hashlock_solver_median_seconds_to_fund',
    help: "Median seconds from a source's initiate block to its destination's, per solver, over the last 30 days",
    labelNames: ['solver'],
    registers: [metrics],
    async collect() {
      for (const r of await records()) if (r.medianSecondsToFund !== null) this.set({ solver: r.solverId }, r.medianSecondsToFund);
    },
  });
  new Gauge({
    name: 'hashlock_solver_suspended',
    help: 'Whether the solver is suspended from quoting (1) or not (0)',
    labelNames: ['solver'],
    registers: [metrics],
    async collect() {
      for (const r of await records()) this.set({ solver: r.solverId }, r.suspended ? 1 : 0);
    },
  });
  healthRoutes(app, ctx);
  // A worker instance answers its operators only: health and metrics.
  if (options.operationsOnly) return app;
  registryRoutes(app, ctx);
  policyRoutes(app, ctx);
  schemaRoutes(app, ctx);
  orderRoutes(app, ctx);
  orderListRoutes(app, ctx);
  eventRoutes(app, ctx);
  quoteRoutes(app, ctx);
  createOrderRoutes(app, ctx);
  const aggregator = aggregatorRoutes(app, ctx);
  v3QuoteRoutes(app, ctx, aggregator);
  v3OrderRoutes(app, ctx, aggregator);
  monitoringRoutes(app, ctx);
  mcpRoutes(app, ctx);
  orderActionRoutes(app, ctx);
  gardenRelayerRoutes(app, ctx);
  liquidityRoutes(app, ctx);
  solverApiRoutes(app, ctx);
  solverQuoteRoutes(app, ctx);
  earningsRoutes(app, ctx);
  affiliateHistoryRoutes(app, ctx);
  webhookRoutes(app, ctx);
  explorerRoutes(app, ctx);
  return app;
}
