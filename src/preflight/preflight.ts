import { solverKeyActsOn } from '../chain-workers.ts';
import { chainAdapter } from '../chains/adapters.ts';
import { loadRegistry, type Chain, type Registry } from '../chains/registry.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import { safeErrorText } from '../errors.ts';
import { migrationStatus, openStore, ping } from '../store/database.ts';
import type { CheckRow, MinimumBalances, PreflightContext } from './family-preflight.ts';

/** The minimums `chains.<key>.minimum_balances` sets, by asset id. */
export function minimumsOf(config: ServiceConfig, chain: Chain): MinimumBalances {
  const set = config.chains[chain.key]?.minimum_balances;
  return {
    ...(set?.relayer !== undefined ? { relayer: BigInt(set.relayer) } : {}),
    ...(set?.solver !== undefined ? { solver: BigInt(set.solver) } : {}),
    inventory: new Map(Object.entries(set?.inventory ?? {}).map(([symbol, amount]) => [`${chain.key}:${symbol}`, BigInt(amount)])),
  };
}

/** What a family's checks of `chain` get from the config. */
export function preflightContext(config: ServiceConfig, chain: Chain, now: number): PreflightContext | undefined {
  const access = config.chains[chain.key];
  if (!access) return undefined;
  const solverAddress = config.solvers.map((s) => s.addresses[chain.key]).find((a) => a !== undefined);
  return {
    chain,
    access,
    keys: { ...(config.keys.relayer ? { relayer: config.keys.relayer } : {}), ...(config.keys.solver ? { solver: config.keys.solver } : {}) },
    ...(solverAddress ? { solverAddress } : {}),
    minimums: minimumsOf(config, chain),
    now,
  };
}

/**
 * Whether the solver key is the party the config's solver names on `chain`: the service runs its solver
 * for the `solvers` entry whose address on some chain is the key's, so an address on another chain that
 * is not the key's would go unnoticed until a swap there.
 */
export function solverKeyRows(config: ServiceConfig, registry: Registry, chain: Chain): CheckRow[] {
  const adapter = chainAdapter(chain);
  const key = config.keys.solver;
  if (!key || !adapter?.partyOfKey) return [];
  return config.solvers.flatMap((solver, i): CheckRow[] => {
    const named = solver.addresses[chain.key];
    if (named === undefined) return [];
    const ofKey = adapter.partyOfKey!(chain, key);
    const check = `solver address ${solver.id}`;
    if (solverKeyActsOn(config, registry, solver, chain.key)) return [{ scope: chain.key, check, status: 'ok', detail: `the solver key's (${ofKey})` }];
    // Another solver's address is not this key's business; only a solver that is the key's elsewhere.
    if (!Object.keys(solver.addresses).some((other) => other !== chain.key && solverKeyActsOn(config, registry, solver, other))) return [];
    return [{ scope: chain.key, check, status: 'error', detail: `solvers[${i}].addresses.${chain.key} is ${named}, the solver key's party there is ${ofKey}` }];
  });
}

/** The checks of every active chain of the registry, through its family, concurrently. */
export async function chainChecks(config: ServiceConfig, registry: Registry, now: number): Promise<CheckRow[]> {
  const perChain = await Promise.all(
    registry.chains
      .filter((chain) => chain.isActive)
      .map(async (chain): Promise<CheckRow[]> => {
        const ctx = preflightContext(config, chain, now);
        if (!ctx) return [{ scope: chain.key, check: 'node', status: 'error', detail: `the config has no chains.${chain.key} entry saying how to reach it` }];
        const load = chainAdapter(chain)?.preflight;
        if (!load) return [{ scope: chain.key, check: 'node', status: 'warn', detail: `${chain.family} chains have no preflight checks yet` }];
        return [...solverKeyRows(config, registry, chain), ...(await (await load())(ctx))];
      }),
  );
  return perChain.flat();
}

/** PostgreSQL (or the data directory's PGlite) answers, and its schema is at this version's migrations. */
export async function databaseChecks(config: ServiceConfig): Promise<CheckRow[]> {
  const scope = 'database';
  const where = config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`;
  let store;
  try {
    store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
    await ping(store.db);
  } catch (err) {
    await store?.close().catch(() => undefined);
    return [{ scope, check: 'reachable', status: 'error', detail: `${where}: ${safeErrorText(err).split('\n')[0]}` }];
  }
  try {
    const status = await migrationStatus(store.db);
    const rows: CheckRow[] = [{ scope, check: 'reachable', status: 'ok', detail: where }];
    if (status.unknown.length > 0) {
      rows.push({ scope, check: 'migrations', status: 'error', detail: `the database has migrations this version does not know (${status.unknown.join(', ')}): a newer version migrated it` });
    } else if (status.pending.length > 0) {
      rows.push({ scope, check: 'migrations', status: 'error', detail: `${status.pending.length} migration(s) behind (${status.pending[0]}…): run hashlock migrate --config FILE` });
    } else {
      rows.push({ scope, check: 'migrations', status: 'ok', detail: `at ${status.applied.at(-1) ?? 'none'}` });
    }
    return rows;
  } catch (err) {
    return [{ scope, check: 'migrations', status: 'error', detail: safeErrorText(err).split('\n')[0]! }];
  } finally {
    await store.close();
  }
}

/** `hashlock preflight`: the database and every active chain, as one list of checks. */
export async function runPreflight(config: ServiceConfig, now = Date.now()): Promise<CheckRow[]> {
  const registry = loadRegistry(config.registryPath);
  const [database, chains] = await Promise.all([databaseChecks(config), chainChecks(config, registry, now)]);
  return [...database, ...chains];
}

/** The rows as a table for people. */
export function formatChecks(rows: readonly CheckRow[]): string {
  const mark = { ok: 'ok', warn: 'WARN', error: 'ERROR' } as const;
  const width = (pick: (r: CheckRow) => string) => Math.max(...rows.map((r) => pick(r).length), 5);
  const scopeWidth = width((r) => r.scope);
  const checkWidth = width((r) => r.check);
  return rows.map((r) => `${r.scope.padEnd(scopeWidth)}  ${r.check.padEnd(checkWidth)}  ${mark[r.status].padEnd(5)}  ${r.detail}`).join('\n');
}
