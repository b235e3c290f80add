import type { FastifyInstance } from 'fastify';
import { ClaimSigner } from './affiliates/claims.ts';
import { addAcceptHandles } from './api/accept-handles.ts';
import { buildApi } from './api/app.ts';
import { chainSigningOptions } from './chains/chain-access.ts';
import { loadRegistry, type Registry } from './chains/registry.ts';
import type { ServiceConfig } from './config/service-config.ts';
import { startPriceSource } from './pricing/configured-prices.ts';
import { RoutePolicy } from './pricing/route-policy.ts';
import { buildStrategies } from './pricing/strategies.ts';
import { loadSecretKey, SecretBox } from './orders/secret-box.ts';
import { randomUUID } from 'node:crypto';
import type { ChainRuntime } from './chains/adapter.ts';
import { systemClock, unixSeconds, type Clock } from './clock.ts';
import { OrderRecorder } from './events/order-recorder.ts';
import { Solver } from './solver/solver.ts';
import { every, LeaseHeartbeat, runWorker } from './lease-loop.ts';
import { connectChains, failureReporter, findOwnSolver, startChainWorkers, startSolverLoop } from './chain-workers.ts';
import { SolverBalanceReader } from './solver/balance-reader.ts';
import { WorkerTiming } from './worker-timing.ts';
import { NodeHealth } from './chains/node-health.ts';
import { checkSolvers } from './solver/solver-config.ts';
import { ConfigError } from './config/schema-check.ts';
import { migrate, openStore, type Store } from './store/database.ts';
import { safeErrorText } from './errors.ts';
import { syncRegistry } from './store/registry-sync.ts';
import { releaseExpiredLiquidity, syncSolvers } from './store/solvers.ts';
import { suspendOverdueSolvers } from './store/solver-records.ts';
import { VERSION } from './version.ts';
import { chainChecks } from './preflight/preflight.ts';
import { startWebhookDelivery } from './webhooks/delivery-worker.ts';
import { enqueueWebhookDeliveries } from './webhooks/outbox.ts';

/** The listening socket's accept queue; the kernel caps it at net.core.somaxconn (4096 on current Linux). */
const LISTEN_BACKLOG = 4096;
/** Listening handles of the API's socket, its own included: each turn of the loop accepts one connection per handle. */
const ACCEPT_HANDLES = 8;

export interface Service {
  store: Store;
  registry: Registry;
  api: FastifyInstance;
  url: string;
  /** The public key this deployment's secrets are sealed to (hex): `secret_public_key` of its API instances. */
  secretPublicKey: string;
  stop: () => Promise<void>;
}

/**
 * What an instance does (`hashlock serve --role`): `api` answers clients and writes jobs, holding no key
 * (secrets sealed to the workers' public key); `workers` watches the chains, signs and sends, runs the
 * solver, records events and delivers webhooks, answering only /health and /metrics; `all` both.
 */
export type ServiceRole = 'api' | 'workers' | 'all';

export interface ServiceOptions {
  /** The time every decision reads: deadlines, timelocks in seconds, backoff, retries, caches (default: the system clock). */
  clock?: Clock;
  role?: ServiceRole;
}

/** The secret box of an instance: an API-only one seals to the workers' public key and opens nothing. */
function secretBoxOf(config: ServiceConfig, role: ServiceRole): SecretBox {
  if (role !== 'api') return new SecretBox(loadSecretKey(process.env, config.dataDir, config.databaseUrl !== undefined, config.keys.secret));
  if (!config.secretPublicKey) {
    throw new ConfigError("secret_public_key: is required with --role api: the public key the worker instances' secret key seals to (their start line prints it)");
  }
  return SecretBox.sealingOnly(config.secretPublicKey);
}

/** Opens the database, migrates it, loads and syncs the registry and solvers, and serves the API. */
export async function startService(given: ServiceConfig, options: ServiceOptions = {}): Promise<Service> {
  const clock = options.clock ?? systemClock;
  const role = options.role ?? 'all';
  if (role !== 'all' && !given.databaseUrl) throw new ConfigError(`--role ${role}: instances of separate roles share one PostgreSQL database: set DATABASE_URL`);
  // An API instance holds no key, whatever its environment or config names.
  const config: ServiceConfig = role === 'api' ? { ...given, keys: {} } : given;
  const registry = loadRegistry(config.registryPath);
  checkSolvers(config.solvers, registry, 'config');
  const strategies = buildStrategies(config.strategies, config.solvers, registry);
  const routePolicy = new RoutePolicy(config.routePolicy, { where: 'config: route_policy', registry });
  // The config's FeeClaim of a chain, else the one the registry or its deployment file names.
  const feeClaims: Record<string, string> = Object.fromEntries(
    registry.chains.flatMap((chain) => {
      const contract = config.chains[chain.key]?.fee_claim ?? chain.feeClaim;
      return contract ? [[chain.key, contract]] : [];
    }),
  );
  config.affiliateFeeAssets.forEach((id, i) => {
    if (!registry.asset(id)?.isActive) throw new ConfigError(`config: affiliate_fee_assets[${i}]: ${id} is not an active asset`);
  });
  const signingOptions = chainSigningOptions(config.chains, registry);
  const secrets = secretBoxOf(config, role);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  const stoppers: Array<() => unknown> = [];
  // Every worker stops at once (each aborts its own work in progress), the API with them.
  const stopAll = async () => {
    const results = await Promise.allSettled(stoppers.map((stop) => stop()));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  try {
    await migrate(store.db);
    await syncRegistry(store.db, registry);
    await syncSolvers(store.db, config.solvers);
    const { prices, stop: stopPrices } = await startPriceSource(config, registry, clock);
    stoppers.push(stopPrices);
    const instance = randomUUID();
    // One statement renews the leases of all this instance's workers.
    const heartbeat = new LeaseHeartbeat(store.db, instance);
    const nodeHealth = new NodeHealth(undefined, clock);
    const timing = new WorkerTiming();
    // Filled once the API's logger exists; the API reaches a chain's actions only when a request comes.
    const runtimes = new Map<string, ChainRuntime>();
    // With the fee signer's key claims are signed (and stored); without it (an API instance) the stored ones are served.
    const claims = new ClaimSigner(registry, {
      ...(config.keys.feeSigner ? { feeSignerKey: config.keys.feeSigner } : {}),
      contracts: feeClaims,
      rpcUrls: Object.fromEntries(Object.keys(feeClaims).flatMap((key) => (config.chains[key]?.rpc_url ? [[key, config.chains[key].rpc_url]] : []))),
      db: store.db,
      clock,
    });
    const api = await buildApi({
      store,
      clock,
      nodeHealth,
      workerTiming: timing,
      registry,
      prices,
      strategies,
      routePolicy,
      solvers: config.solvers,
      secrets,
      affiliateFeeAssets: config.affiliateFeeAssets,
      signingOptions,
      claims,
      ...(config.keys.relayer || role === 'api' ? { relayer: { actionsFor: (chainKey: string) => runtimes.get(chainKey)?.clientActions } } : {}),
      ...(role === 'workers' ? { operationsOnly: true } : {}),
      version: VERSION,
      logger: { level: config.logLevel },
      orderCacheMs: config.orderCacheMs,
      solverFundWithinSeconds: config.solverFundWithinSeconds,
      solverQuoteDeadlineMs: config.solverQuoteDeadlineMs,
      ...(config.solverMatchFirst ? { solverMatchFirst: config.solverMatchFirst } : {}),
      ...(config.rateLimits ? { rateLimits: config.rateLimits } : {}),
      trustProxy: config.trustProxy,
      eventStreams: config.eventStreams,
      webhooksAllowPrivateAddresses: config.webhooksAllowPrivateAddresses,
    });
    const failed = failureReporter(api.log);
    for (const [key, runtime] of connectChains(config, registry, { db: store.db, clock, secrets, instance, log: api.log })) runtimes.set(key, runtime);
    // The chains' preflight checks (chain id, contract code, balances against their minimums, clock), at
    // start and every minute: what /health reports as degraded and hashlock_chain_check_status shows.
    const runChecks = async () => {
      try {
        nodeHealth.checked(await chainChecks(config, registry, clock.now()));
      } catch (err) {
        failed(err, 'checking the chains failed');
      }
    };
    const firstChecks = runChecks();
    const stopChecks = every(60_000, runChecks);
    stoppers.push(async () => {
      await firstChecks;
      await stopChecks();
    });
    // What watches the chains, signs and sends, and answers for the service: never on an API-only instance.
    if (role !== 'api') {
      const balances = new SolverBalanceReader(store.db, registry, config.solvers, runtimes);
      const readBalances = async () => {
        try {
          await balances.refresh();
        } catch (err) {
          failed(err, 'reading the solver balances failed');
        }
      };
      await readBalances();
      stoppers.push(every(5_000, readBalances));

      stoppers.push(...(await startChainWorkers(store, runtimes, { instance, heartbeat, timing, nodeHealth, log: api.log, failed })));

      // The order event log (one instance records, under its lease, writing the webhook outbox with each
      // event) and the solver this instance's key is (one instance per solver) both run whenever an
      // order changes: every write of an order, its swaps or fees notifies `order_changed` at commit.
      const recorder = new OrderRecorder(store.db, [enqueueWebhookDeliveries], clock);
      const recorderLoop = runWorker(
        store.db,
        timing.timed({ lease: 'order-events', intervalMs: 1_000, tick: async (signal) => void (await recorder.tick(signal)) }),
        { holder: instance, heartbeat, onError: (err) => failed(err, 'recording order events failed') },
      );
      stoppers.push(() => recorderLoop.stop());
      // Affiliate fee claims, signed ahead for the API instances, which hold no key.
      if (claims.canSign) {
        const claimLoop = runWorker(
          store.db,
          timing.timed({ lease: 'fee-claims', intervalMs: 5_000, tick: async (signal) => void (await claims.signOutstanding(signal)) }),
          { holder: instance, heartbeat, onError: (err) => failed(err, 'signing affiliate fee claims failed') },
        );
        stoppers.push(() => claimLoop.stop());
      }
      const onOrderChanged: Array<(orderId: string) => void> = [
        (orderId) => {
          recorder.touch(orderId);
          recorderLoop.wake();
        },
      ];
      const solverChains = [...runtimes.values()].flatMap((r) => (r.solver ? [r.solver] : []));
      const ownSolver = findOwnSolver(config, registry);
      if (ownSolver && solverChains.length > 0) {
        const solver = new Solver(store.db, ownSolver.id, solverChains, secrets, {
          marginSeconds: config.solverRule2MarginSeconds,
          log: api.log.child({ worker: 'solver' }),
          clock,
          clientActions: (chainKey) => runtimes.get(chainKey)?.clientActions,
        });
        const loop = startSolverLoop(store, solver, { instance, heartbeat, timing, failed });
        stoppers.push(() => loop.stop());
        // A pass looks first at the orders that changed, and once a second regardless.
        onOrderChanged.push(loop.touch);
      }
      // Webhook deliveries go out from every instance (each delivery claimed by one).
      stoppers.push(
        await startWebhookDelivery(store, {
          secrets,
          worker: instance,
          clock,
          allowPrivateAddresses: config.webhooksAllowPrivateAddresses,
          keepDeliveriesMs: config.webhooksKeepDeliveriesDays * 86_400_000,
          log: api.log.child({ worker: 'webhooks' }),
        }),
      );
      stoppers.push(
        await store.listen('order_changed', {
          message: (orderId) => onOrderChanged.forEach((handle) => handle(orderId)),
          // Changes made while not listening are found by a recheck of every order not yet final.
          connected: (isConnected) => {
            if (isConnected) recorder.recheck();
          },
        }),
      );
      stoppers.push(
        every(10_000, async () => {
          try {
            const released = await releaseExpiredLiquidity(store.db, unixSeconds(clock));
            if (released > 0) api.log.info({ released }, 'released the liquidity of expired orders');
          } catch (err) {
            failed(err, 'releasing expired liquidity failed');
          }
        }),
      );
      // A solver that leaves a confirmed source unfunded past its due time stops quoting until the operator restores it.
      stoppers.push(
        every(10_000, async () => {
          try {
            for (const { solverId, orderId } of await suspendOverdueSolvers(store.db, { nowUnix: unixSeconds(clock), fundWithinSeconds: config.solverFundWithinSeconds })) {
              api.log.warn({ solver: solverId, order: orderId }, 'solver suspended from quoting: it left a confirmed source unfunded past its due time (hashlock solvers restore to undo)');
            }
          } catch (err) {
            failed(err, 'checking the solvers for overdue fundings failed');
          }
        }),
      );
    }
    // Node's default accept queue (511) overflows when a thousand clients connect at once while the loop
    // is busy; the kernel then drops their SYNs and they retry after 1, 3, 7 s, or time out.
    const address = await api.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
    try {
      const copies = await addAcceptHandles(api.server, ACCEPT_HANDLES - 1, { onError: (err) => api.log.warn({ err }, 'accepting a connection failed') });
      stoppers.push(copies.close);
    } catch (err) {
      api.log.warn({ error: safeErrorText(err) }, 'the API accepts on its one listening handle (one new connection per turn of the loop)');
    }
    return {
      store,
      registry,
      api,
      url: address,
      secretPublicKey: Buffer.from(secrets.publicKey).toString('hex'),
      // The API closes (answering the requests in flight) while the workers stop; the store last.
      stop: async () => {
        stoppers.push(() => api.close());
        try {
          await stopAll();
        } finally {
          await store.close();
        }
      },
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    await store.close();
    throw err;
  }
}


