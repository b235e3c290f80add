import type { ChainContext, ChainRuntime } from './chains/adapter.ts';
import { chainAdapter } from './chains/adapters.ts';
import type { NodeHealth } from './chains/node-health.ts';
import type { Registry } from './chains/registry.ts';
import type { ServiceConfig, SolverConfig } from './config/service-config.ts';
import { runWorker, type LeaseHeartbeat, type LeasedLoop } from './lease-loop.ts';
import type { Log } from './log.ts';
import type { Solver } from './solver/solver.ts';
import { isConnectionLoss, type Store } from './store/database.ts';
import { CHAIN_INDEX_CHANNEL } from './store/index-requests.ts';
import { solverLeaseName } from './store/leases.ts';
import { safeErrorText } from './errors.ts';
import type { WorkerTiming } from './worker-timing.ts';

/**
 * The chains a process works: connected from the config (the service's, or a `hashlock solver`'s with
 * its own keys), and their workers (watchers, senders, broadcasters) run under leases.
 */

/** Reports a worker's failure: what failed, and fields that place it (a chain, an order). */
export type FailureReporter = (err: unknown, what: string, details?: object) => void;

/**
 * A lost database fails every worker's pass at once, and each retries on its next: a short warning
 * then, not a stack trace per pass; anything else in full.
 */
export function failureReporter(log: Log): FailureReporter {
  return (err, what, details = {}) => {
    if (isConnectionLoss(err)) log.warn({ ...details, error: safeErrorText(err) }, `${what}: the database is unavailable; retrying`);
    else log.error({ ...details, err }, what);
  };
}

export interface ChainWorkersContext {
  instance: string;
  heartbeat: LeaseHeartbeat;
  timing: WorkerTiming;
  nodeHealth: NodeHealth;
  log: Log;
  failed: FailureReporter;
}

/**
 * Every chain's workers, each run by one instance at a time under its lease. A sender is woken when a
 * job of its own becomes due (`job_queued`, from any instance). Returns their stoppers.
 */
export async function startChainWorkers(store: Store, runtimes: ReadonlyMap<string, ChainRuntime>, ctx: ChainWorkersContext): Promise<Array<() => unknown>> {
  const { instance, heartbeat, timing, nodeHealth, failed } = ctx;
  const stoppers: Array<() => unknown> = [];
  for (const [key, runtime] of runtimes) {
    // One-time work (token approvals) goes out before the first funding needs it.
    await runtime.prepare?.().catch((err: unknown) => ctx.log.warn({ err, chain: key }, 'preparing the chain failed; the first action that needs it retries'));
  }
  const byJob = new Map<string, LeasedLoop[]>();
  const byIndex = new Map<string, LeasedLoop>();
  for (const [key, runtime] of runtimes) {
    for (const worker of runtime.workers) {
      // A pass that failed for anything but the database tells that the chain's node is out of reach.
      const reporting = {
        ...worker,
        tick: async (signal: AbortSignal, wake: () => void) => {
          const nextMs = await worker.tick(signal, wake);
          nodeHealth.answered(key, worker.lease);
          return nextMs;
        },
      };
      const onError = (err: unknown) => {
        if (!isConnectionLoss(err)) nodeHealth.failed(key, worker.lease, err);
        failed(err, `${worker.lease} failed`, { chain: key });
      };
      const loop = runWorker(store.db, timing.timed(reporting), { holder: instance, heartbeat, onError });
      stoppers.push(() => loop.stop());
      if (worker.wakeOnJob) byJob.set(worker.wakeOnJob, [...(byJob.get(worker.wakeOnJob) ?? []), loop]);
      if (worker.wakeOnIndex) byIndex.set(worker.wakeOnIndex, loop);
    }
  }
  // An idle sender sleeps on this notification; jobs queued while it was not heard are looked for on reconnecting.
  const wakeSenders = (loops: LeasedLoop[] | undefined) => loops?.forEach((loop) => loop.wake());
  stoppers.push(
    await store.listen('job_queued', {
      message: (name) => wakeSenders(byJob.get(name)),
      connected: (isConnected) => {
        if (isConnected) for (const loops of byJob.values()) wakeSenders(loops);
      },
    }),
  );
  // A client's report of a transaction (POST /v3/index) wakes the chain's watcher, wherever it runs.
  stoppers.push(await store.listen(CHAIN_INDEX_CHANNEL, { message: (chain) => byIndex.get(chain)?.wake(), connected: () => undefined }));
  return stoppers;
}

/** A solver's passes, run under the lease `solver:<id>`; `touch` puts an order that changed first in the next pass, now. */
export function startSolverLoop(
  store: Store,
  solver: Solver,
  ctx: Pick<ChainWorkersContext, 'instance' | 'heartbeat' | 'timing' | 'failed'>,
): { touch: (orderId: string) => void; wake: () => void; stop: () => Promise<void> } {
  const loop = runWorker(
    store.db,
    ctx.timing.timed({ lease: solverLeaseName(solver.solverId), intervalMs: 1_000, tick: async (signal) => void (await solver.tick(signal)) }),
    { holder: ctx.instance, heartbeat: ctx.heartbeat, onError: (err) => ctx.failed(err, 'solver pass failed') },
  );
  return {
    touch: (orderId) => {
      solver.touch(orderId);
      loop.wake();
    },
    wake: () => loop.wake(),
    stop: () => loop.stop(),
  };
}

/** The solver whose party on some chain is the configured solver key's identity there. */
export function findOwnSolver(config: ServiceConfig, registry: Registry): SolverConfig | undefined {
  const key = config.keys.solver;
  if (!key) return undefined;
  return config.solvers.find((s) => Object.keys(s.addresses).some((chainKey) => solverKeyActsOn(config, registry, s, chainKey)));
}

/** Whether the configured solver key is `solver`'s party on the chain. */
export function solverKeyActsOn(config: ServiceConfig, registry: Registry, solver: SolverConfig, chainKey: string): boolean {
  const chain = registry.chain(chainKey);
  const adapter = chain && chainAdapter(chain);
  const address = solver.addresses[chainKey];
  if (!config.keys.solver || !chain || !adapter?.partyOfKey || !address) return false;
  return adapter.normalizeParty(chain, address)?.toLowerCase() === adapter.partyOfKey(chain, config.keys.solver).toLowerCase();
}

/** Every configured chain with an RPC whose family works chains, connected through its adapter. */
export function connectChains(
  config: ServiceConfig,
  registry: Registry,
  shared: Pick<ChainContext, 'db' | 'clock' | 'secrets' | 'instance' | 'log'>,
): Map<string, ChainRuntime> {
  const ownSolver = findOwnSolver(config, registry);
  const runtimes = new Map<string, ChainRuntime>();
  for (const [key, access] of Object.entries(config.chains)) {
    const chain = registry.chain(key);
    const connect = chain && chainAdapter(chain)?.connect;
    if (!chain || !connect || !access.rpc_url) continue;
    runtimes.set(
      key,
      connect({
        ...shared,
        chain,
        registry,
        access: { ...access, rpc_url: access.rpc_url },
        ...(config.keys.relayer ? { relayerKey: config.keys.relayer } : {}),
        // Without the key (an API instance), the relayer's address the config names: its jobs are the workers' to sign.
        ...(!config.keys.relayer && access.relayer ? { relayerAddress: access.relayer } : {}),
        ...(ownSolver && solverKeyActsOn(config, registry, ownSolver, key) ? { solverKey: config.keys.solver! } : {}),
      }),
    );
  }
  return runtimes;
}
