import type { ServiceConfig } from '../config/service-config.ts';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { DevChain } from './local-chain.ts';
import type { SolverProcess } from '../solver-process/solver-process.ts';
import { findSolverByKey, registerSolver } from '../store/solver-registry.ts';
import { loadRegistry } from '../chains/registry.ts';
import { startService, type Service } from '../service.ts';
import { createApp, findAppByKey } from '../store/apps.ts';
import { devAccount, privateKeyOf } from './accounts.ts';
import { devnetPath, readDevnetFile, updateDevnetFile } from './devnet-file.ts';
import { localChainOf } from './families.ts';

export interface DevOptions {
  /** Milliseconds between blocks by chain key (the registry's block time by default); 0 mines only when asked (EVM: each transaction at once). */
  blockTimeMs?: Readonly<Record<string, number>>;
  /** Chains listen on their well-known local ports (Garden's local environment: 8545, 8546) where free; `hashlock dev` asks for this, tests usually not. */
  wellKnownPorts?: boolean;
  /**
   * Also runs `hashlock solver` beside the in-process solver: registered as a solver, with its own key
   * (dev account `maker`) and PGlite (`<data dir>/solver`), funded on the chains whose family can
   * fund it, quoting 10 bips under the in-process strategies there.
   */
  externalSolver?: boolean;
}

export interface Dev {
  service: Service;
  /** With `externalSolver`: the `hashlock solver` running beside the service. */
  externalSolver?: SolverProcess;
  /** Every local chain that runs, as its family's local chain (src/localnet/families.ts) started it. */
  chains: DevChain[];
  apiUrl: string;
  appKey: string;
  stop: () => Promise<void>;
}

/**
 * `hashlock dev` (`npm start`): a local node for every chain of the registry whose family has a
 * local chain in src/localnet/ (their state kept in the data dir, so a restart resumes), with contracts, test tokens
 * and funded accounts, and the whole service on the embedded database. A development app is created
 * on first start; its key stays in devnet.json.
 */
export async function startDev(config: ServiceConfig, options: DevOptions = {}): Promise<Dev> {
  const registry = loadRegistry(config.registryPath);
  const devChains: DevChain[] = [];
  const stopNodes = async () => {
    await Promise.all(devChains.map((c) => c.stop()));
  };
  try {
    // The dev accounts' public keys sign for the relayer and the solver unless the environment names others.
    const keys = {
      relayer: config.keys.relayer ?? privateKeyOf(devAccount('relayer')),
      solver: config.keys.solver ?? privateKeyOf(devAccount('solver')),
      feeSigner: config.keys.feeSigner ?? privateKeyOf(devAccount('feeSigner')),
    };
    const user = devAccount('user');
    for (const chain of registry.chains) {
      const devnet = localChainOf(chain.family);
      if (!devnet) continue;
      const started = await devnet.start(chain, {
        dataDir: config.dataDir,
        keys: { ...keys, user: privateKeyOf(user) },
        blockTimeMs: options.blockTimeMs?.[chain.key] ?? chain.blockTimeMs,
        wellKnownPorts: options.wellKnownPorts ?? false,
      });
      if ('unavailable' in started) console.warn(started.unavailable);
      else devChains.push(started);
    }
    const chains = { ...config.chains };
    for (const c of devChains) chains[c.chain.key] = { ...chains[c.chain.key], ...c.access };
    const service = await startService({ ...config, chains, keys });
    let appKey = readDevnetFile(config.dataDir).app_key;
    if (!appKey || !(await findAppByKey(service.store.db, appKey))) {
      appKey = (await createApp(service.store.db, { name: 'devnet', gasless: true })).key;
    }
    const accountsOf = (role: 'user' | 'solver') => Object.assign({}, ...devChains.map((c) => c.accounts?.[role] ?? {})) as Record<string, unknown>;
    updateDevnetFile(config.dataDir, {
      api_url: service.url,
      app_key: appKey,
      chains: Object.fromEntries(devChains.map((c) => [c.chain.key, c.record])),
      accounts: {
        user: { address: user.address, private_key: privateKeyOf(user), ...accountsOf('user') },
        solver: { address: devAccount('solver').address, ...accountsOf('solver') },
        relayer: { address: devAccount('relayer').address },
      },
    });
    const externalSolver = options.externalSolver ? await startDevSolver(config, service, devChains).catch(async (err: unknown) => {
      await service.stop();
      throw err;
    }) : undefined;
    return {
      service,
      chains: devChains,
      apiUrl: service.url,
      appKey,
      ...(externalSolver ? { externalSolver } : {}),
      stop: async () => {
        await externalSolver?.stop();
        await service.stop();
        await stopNodes();
      },
    };
  } catch (err) {
    await stopNodes();
    throw err;
  }
}

/**
 * The dev `hashlock solver`: its solver key kept in devnet.json (`external_solver`) so a restart
 * resumes as the same solver, its account funded on every chain whose local node can, and its
 * strategies the in-process ones on those chains, 10 bips cheaper.
 */
async function startDevSolver(config: ServiceConfig, service: Service, devChains: DevChain[]): Promise<SolverProcess> {
  const key = privateKeyOf(devAccount('maker'));
  const funded = devChains.filter((c) => c.fund !== undefined);
  for (const c of funded) await c.fund!(key);
  const saved = readDevnetFile(config.dataDir).external_solver as { id: string; api_key: string } | undefined;
  let registered = saved && (await findSolverByKey(service.store.db, saved.api_key)) ? saved : undefined;
  if (!registered) {
    const id = `dev-maker-${randomBytes(3).toString('hex')}`;
    registered = { id, api_key: (await registerSolver(service.store.db, { id, name: 'dev market maker (hashlock solver)' })).key };
    updateDevnetFile(config.dataDir, { external_solver: registered });
  }
  const onFunded = (ids: string | string[]) => [ids].flat().every((id) => funded.some((c) => id.startsWith(`${c.chain.key}:`)));
  const { startSolverProcess } = await import('../solver-process/solver-process.ts');
  return startSolverProcess(
    {
      ...config,
      dataDir: join(config.dataDir, 'solver'),
      databaseUrl: undefined,
      chains: Object.fromEntries(devChains.map((c) => [c.chain.key, c.access])),
      keys: { solver: key },
      solvers: [],
      strategies: config.strategies.filter((s) => onFunded(s.from) && onFunded(s.to)).map((s) => ({ ...s, fee_bips: Math.max(0, s.fee_bips - 10) })),
    },
    { serviceUrl: service.url, solverApiKey: registered.api_key },
  );
}

export function describeDev(config: ServiceConfig, dev: Dev): string {
  return [
    '',
    `  Hashlock dev service is running (${config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`})`,
    `  API      ${dev.apiUrl}`,
    `  API key  ${dev.appKey}   (send it as the service-app-id header)`,
    `  Docs     ${dev.apiUrl}/docs`,
    ...dev.chains.map((c) => `  Chain    ${c.chain.key.padEnd(18)} ${c.describe}`),
    ...dev.chains.flatMap((c) => (c.notes ?? []).map((note) => `  Note     ${note}`)),
    ...(dev.externalSolver ? [`  Solver   hashlock solver ${dev.externalSolver.id} beside the service's own (its data in ${join(config.dataDir, 'solver')})`] : []),
    `  Written  ${devnetPath(config.dataDir)}`,
    '',
    `  try: curl -H 'service-app-id: ${dev.appKey}' '${dev.apiUrl}/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000'`,
    '',
  ].join('\n');
}
