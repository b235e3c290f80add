import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { Hex } from 'viem';
import { connectChains, failureReporter, startChainWorkers, startSolverLoop } from '../chain-workers.ts';
import { chainAdapter } from '../chains/adapters.ts';
import { NodeHealth } from '../chains/node-health.ts';
import { loadRegistry, type Registry } from '../chains/registry.ts';
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { ServiceConfig, SolverConfig } from '../config/service-config.ts';
import { isFetchFailure, safeErrorText } from '../errors.ts';
import { every, LeaseHeartbeat } from '../lease-loop.ts';
import type { ParentLog } from '../log.ts';
import { loadSecretKey, SecretBox } from '../orders/secret-box.ts';
import { startPriceSource } from '../pricing/configured-prices.ts';
import { Quoter } from '../pricing/quote.ts';
import { buildStrategies } from '../pricing/strategies.ts';
import { SolverBalanceReader } from '../solver/balance-reader.ts';
import { Solver } from '../solver/solver.ts';
import { migrate, openStore, type Store } from '../store/database.ts';
import { syncRegistry } from '../store/registry-sync.ts';
import { solverAddressMessage } from '../store/solver-registry.ts';
import { availableLiquidity, syncSolvers } from '../store/solvers.ts';
import { WorkerTiming } from '../worker-timing.ts';
import { OrderMirror } from './order-mirror.ts';
import { QuoteAnswerer } from './quote-answerer.ts';
import { SolverApiClient, SolverApiError, type SolverIdentity } from './solver-api-client.ts';

export interface SolverProcessOptions {
  /** The service's API, whose solver API this process uses. */
  serviceUrl: string;
  /** The solver key the operator issued (`hashlock solvers register`). */
  solverApiKey: string;
  /** Stops waiting for an unreachable service: the start then rejects with its reason. */
  signal?: AbortSignal;
  clock?: Clock;
  log?: ParentLog;
}

export interface SolverProcess {
  id: string;
  store: Store;
  /** Its addresses, by chain: its key's party there, each proven to the service. */
  addresses: Record<string, string>;
  answerer: QuoteAnswerer;
  stop(): Promise<void>;
}

/**
 * `hashlock solver`: a solver outside the service, holding its own key (`HASHLOCK_SOLVER_KEY`) and its
 * own job store (PGlite in its data directory by default). It proves its addresses and registers the
 * pairs of its strategies with the service, answers the quote requests, mirrors the orders matched to
 * it, and takes its own steps on them (fund the destination, redeem the source, refund its expired
 * destination) with the same Solver, chain adapters and transaction engine as the service's solver.
 */
export async function startSolverProcess(config: ServiceConfig, options: SolverProcessOptions): Promise<SolverProcess> {
  const key = config.keys.solver;
  if (!key) throw new ConfigError("HASHLOCK_SOLVER_KEY: hashlock solver needs the solver's own private key");
  const clock = options.clock ?? systemClock;
  const log = options.log ?? pino({ level: config.logLevel, name: 'hashlock-solver' });
  const registry = loadRegistry(config.registryPath);
  checkServiceUrl(options.serviceUrl);
  // Configuration is checked before any call: a mistake in it fails at once, never taken for an outage.
  // Its strategies are its own, whatever solver the file names in them: checked under one id, then its registered one.
  const addresses = partiesOfKey(registry, config, key);
  const checked = buildStrategies(
    config.strategies.map((s) => ({ ...s, solver: SELF })),
    [{ id: SELF, name: SELF, addresses }],
    registry,
  );
  const pairs = [...new Map(checked.map((s) => [`${s.from.id}|${s.to.id}`, { source_asset: s.from.id, destination_asset: s.to.id }])).values()];
  const api = new SolverApiClient(options.serviceUrl, options.solverApiKey, log);
  // The service may be down or restarting: the solver waits for it rather than exit.
  const me = await untilReachable(log, options.signal, async () => {
    const me = await api.me();
    await proveAddresses(api, me, registry, addresses, key);
    await api.setPairs(pairs);
    return me;
  });
  const strategies = checked.map((s) => ({ ...s, solverId: me.id }));
  const own: SolverConfig = { id: me.id, name: me.name, addresses };

  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  const stoppers: Array<() => unknown> = [];
  const controller = new AbortController();
  const stopAll = async () => {
    controller.abort();
    await Promise.allSettled(stoppers.map((stop) => stop()));
  };
  try {
    await migrate(store.db);
    await syncRegistry(store.db, registry);
    await syncSolvers(store.db, [own]);
    const secrets = new SecretBox(loadSecretKey(process.env, config.dataDir, config.databaseUrl !== undefined, config.keys.secret));
    const instance = randomUUID();
    const heartbeat = new LeaseHeartbeat(store.db, instance);
    const timing = new WorkerTiming();
    const failed = failureReporter(log);
    const local: ServiceConfig = { ...config, solvers: [own], keys: { solver: key } };
    const runtimes = connectChains(local, registry, { db: store.db, clock, secrets, instance, log });
    const balances = new SolverBalanceReader(store.db, registry, [own], runtimes);
    const readBalances = () => balances.refresh().then(() => undefined, (err: unknown) => failed(err, 'reading its balances failed'));
    await readBalances();
    stoppers.push(every(5_000, readBalances));
    stoppers.push(...(await startChainWorkers(store, runtimes, { instance, heartbeat, timing, nodeHealth: new NodeHealth(undefined, clock), log, failed })));

    const solverChains = [...runtimes.values()].flatMap((r) => (r.solver ? [r.solver] : []));
    const solver = new Solver(store.db, me.id, solverChains, secrets, { serviceSteps: false, marginSeconds: config.solverRule2MarginSeconds, clock, log: log.child({ worker: 'solver' }) });
    const loop = startSolverLoop(store, solver, { instance, heartbeat, timing, failed });
    stoppers.push(() => loop.stop());
    const { touch } = loop;
    stoppers.push(await store.listen('order_changed', { message: touch, connected: () => loop.wake() }));

    const mirror = new OrderMirror(store.db, me.id);
    await mirror.open();
    const following = [
      api.follow(
        '/solver/v1/orders/events',
        {
          resumeFrom: () => mirror.resumeFrom(),
          event: async (type, data) => {
            if (type !== 'message') return;
            const { orderId, isNew } = await mirror.apply(data);
            if (isNew) log.info({ order: orderId }, 'order matched');
            touch(orderId);
          },
        },
        controller.signal,
      ),
    ];
    // Its liquidity changes with each balance read (every 5 s): read once a second at most, not per
    // request, so a burst of requests is answered within the deadline.
    const liquidity = new Map<string, { at: number; read: Promise<Map<string, bigint>> }>();
    const available = (asset: string) => {
      const cached = liquidity.get(asset);
      if (cached && clock.now() - cached.at < 1_000) return cached.read;
      const read = availableLiquidity(store.db, asset);
      liquidity.set(asset, { at: clock.now(), read });
      read.catch(() => liquidity.delete(asset));
      return read;
    };
    const { prices, stop: stopPrices } = await startPriceSource(config, registry, clock);
    stoppers.push(stopPrices);
    const quoter = new Quoter(strategies, prices, available);
    const answerer = new QuoteAnswerer(api, quoter, registry, log);
    following.push(
      api.follow(
        '/solver/v1/quote-requests',
        {
          // Answered at once, not one after another: each has the deadline to meet.
          event: (type, data) => void (type === 'quote_request' ? answerer.handle(data) : undefined),
        },
        controller.signal,
      ),
    );
    stoppers.push(() => Promise.all(following));
    log.info({ solver: me.id, addresses, pairs: pairs.length }, 'hashlock solver running');
    return {
      id: me.id,
      store,
      addresses,
      answerer,
      stop: async () => {
        await stopAll();
        await store.close();
      },
    };
  } catch (err) {
    await stopAll();
    await store.close();
    throw err;
  }
}

/** The id its strategies are checked under before it knows its registered one. */
const SELF = 'hashlock-solver';

function checkServiceUrl(url: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    // not a URL: refused below
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(`--service: ${url} is not an http(s) URL`);
}

/** Whether the service is out of reach: no connection, no answer in time, or a 5xx. */
function isUnreachable(err: unknown): boolean {
  return isFetchFailure(err) || (err instanceof DOMException && err.name === 'TimeoutError') || (err instanceof SolverApiError && err.status >= 500);
}

/** Runs `step` until the service answers it, 1 s apart while it is unreachable; any other failure throws. */
async function untilReachable<T>(log: ParentLog, signal: AbortSignal | undefined, step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      if (attempt === 1 || attempt % 30 === 0) log.warn({ error: safeErrorText(err), attempt }, 'the service is not reachable; trying again every second');
      await sleep(1_000, undefined, { signal });
    }
  }
}

/** The key's party on every configured chain whose family proves addresses. */
function partiesOfKey(registry: Registry, config: ServiceConfig, key: Hex): Record<string, string> {
  const addresses: Record<string, string> = {};
  for (const [chainKey, access] of Object.entries(config.chains)) {
    const chain = registry.chain(chainKey);
    const adapter = chain && chainAdapter(chain);
    if (!chain || !access.rpc_url || !adapter?.partyOfKey || !adapter.signAddressProof) continue;
    addresses[chainKey] = adapter.partyOfKey(chain, key);
  }
  return addresses;
}

/** Proves each of `addresses` to the service unless it is already. */
async function proveAddresses(api: SolverApiClient, me: SolverIdentity, registry: Registry, addresses: Record<string, string>, key: Hex): Promise<void> {
  for (const [chainKey, address] of Object.entries(addresses)) {
    const chain = registry.chain(chainKey);
    const adapter = chain && chainAdapter(chain);
    if (!chain || !adapter?.signAddressProof) continue; // none: partiesOfKey keeps only the chains that prove
    const proven = me.addresses.find((a) => a.chain === chainKey);
    if (proven && adapter.normalizeParty(chain, proven.address) === adapter.normalizeParty(chain, address)) continue;
    await api.proveAddress(chainKey, address, await adapter.signAddressProof(key, solverAddressMessage(me.id, chainKey, address)));
  }
}
