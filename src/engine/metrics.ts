import { Counter, Gauge, type Registry } from 'prom-client';
import type { NodeHealth } from '../chains/node-health.ts';
import { ping, type Db } from '../store/database.ts';
import { jobQueueStats, type JobQueueStat } from '../store/relayer-jobs.ts';

/** What the engines of this process count, by chain: registered with the API's metrics by `registerEngineMetrics`. */
export const engineCounters = {
  refused: new Counter({ name: 'hashlock_engine_refusals_total', help: 'Attempts the chain refused (a revert, a refused transaction): each uses up one of its job\'s attempts', labelNames: ['chain'] as const, registers: [] }),
  deferred: new Counter({ name: 'hashlock_engine_node_errors_total', help: 'Passes over a job that could not reach the chain\'s node (deferred, no attempt used)', labelNames: ['chain'] as const, registers: [] }),
  bumps: new Counter({ name: 'hashlock_engine_bumps_total', help: 'Transactions re-signed with higher fees', labelNames: ['chain'] as const, registers: [] }),
  cancellations: new Counter({ name: 'hashlock_engine_cancellations_total', help: 'Fundings cancelled past their broadcast deadline (safety rule 2)', labelNames: ['chain'] as const, registers: [] }),
};

/**
 * The engines' metrics on `registry`: the counters above, the queue as the database holds it (every
 * instance's jobs, read at each scrape in one query), and whether each chain's node answers here.
 */
export function registerEngineMetrics(registry: Registry, db: Db, health?: NodeHealth): void {
  for (const counter of Object.values(engineCounters)) registry.registerMetric(counter);
  let read: Promise<JobQueueStat[]> | undefined;
  let settled = true;
  // The gauges of one scrape share one read: each collect starts together, while the first one's read is
  // pending; a later scrape finds it settled and reads again. (Not cleared on a later turn of the event
  // loop: a scrape answered through promises alone, as an in-process request on PGlite is, never reaches one.)
  const queue = () => {
    if (!read || settled) {
      settled = false;
      read = jobQueueStats(db).finally(() => (settled = true));
    }
    return read;
  };
  // The database out of reach leaves the queue's gauges empty, so /metrics still answers and says so.
  const queueOrNone = () => queue().catch((): JobQueueStat[] => []);
  new Gauge({
    name: 'hashlock_database_up',
    help: 'Whether the database answered a ping within 2 s at this scrape (1) or not (0)',
    registers: [registry],
    async collect() {
      this.set(
        await ping(db).then(
          () => 1,
          () => 0,
        ),
      );
    },
  });
  new Gauge({
    name: 'hashlock_engine_jobs',
    help: 'Unsettled jobs by chain and state',
    labelNames: ['chain', 'status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await queueOrNone()) this.set({ chain: row.chain, status: row.status }, row.jobs);
    },
  });
  /** A gauge by chain, folding the chain's rows (one per state) into one value. */
  const byChain = (name: string, help: string, fold: (value: number, row: JobQueueStat) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['chain'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const values = new Map<string, number>();
        for (const row of await queueOrNone()) values.set(row.chain, fold(values.get(row.chain) ?? 0, row));
        for (const [chain, value] of values) this.set({ chain }, value);
      },
    });
  byChain('hashlock_engine_oldest_pending_seconds', 'Age of the oldest unsettled job by chain', (oldest, row) => Math.max(oldest, row.oldestSeconds));
  byChain('hashlock_engine_jobs_waiting_for_node', "Unsettled jobs whose last pass could not reach the chain's node", (waiting, row) => waiting + row.waiting);
  if (health) {
    new Gauge({
      name: 'hashlock_chain_node_degraded',
      help: 'Chains whose node this instance has not reached for longer than the health threshold (1), by chain',
      labelNames: ['chain'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const problem of health.degraded()) this.set({ chain: problem.chain }, 1);
      },
    });
    new Gauge({
      name: 'hashlock_chain_check_status',
      help: "Each chain's preflight checks as the service last ran them (every minute): 0 ok, 1 warning, 2 error; by chain and check (chain id, code <asset>, decimals <asset>, balance relayer, balance solver, inventory <asset>, clock)",
      labelNames: ['chain', 'check'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const row of health.checkStatuses()) this.set({ chain: row.chain, check: row.check }, row.status);
      },
    });
  }
}
