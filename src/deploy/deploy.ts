import { chainAdapter } from '../chains/adapters.ts';
import { loadRegistry } from '../chains/registry.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import { readDeployment, writeChainDeployment, type ChainDeployment } from './deployment-file.ts';

export interface DeployRequest {
  config: ServiceConfig;
  chainKey: string;
  /** Asset ids (`<chain>:<symbol>`) to deploy HTLCs for; empty: every asset of the chain, and its FeeClaim. */
  assetIds: readonly string[];
  deployerKey: Uint8Array;
  /** Family options (`feeSigner`, `upgradeAuthority`). */
  options: Readonly<Record<string, string>>;
  log: (line: string) => void;
}

export interface DeployOutcome {
  /** The deployment file written. */
  path: string;
  deployment: ChainDeployment;
  /** Contracts this run created (the others were found on chain). */
  created: number;
}

/**
 * `hashlock deploy`: one chain of the config's registry, through its family's deployer; what stands on
 * chain afterwards is written to the deployment file beside the registry (the entries of other chains
 * kept, this chain's contracts merged with those an earlier run recorded for other assets).
 */
export async function deployChain(request: DeployRequest): Promise<DeployOutcome> {
  const { config, chainKey } = request;
  const registry = loadRegistry(config.registryPath, { undeployed: true });
  const chain = registry.chain(chainKey);
  if (!chain) throw new ConfigError(`--chain: ${chainKey} is not a chain of ${config.registryPath} (${registry.chains.map((c) => c.key).join(', ')})`);
  const access = config.chains[chainKey];
  if (!access) throw new ConfigError(`--chain: the config has no chains.${chainKey} entry saying how to reach it`);
  const loadDeployer = chainAdapter(chain)?.deployer;
  if (!loadDeployer) throw new ConfigError(`--chain: ${chainKey} is a ${chain.family} chain, which hashlock deploy does not deploy to (its HTLCs are scripts, or the family is not supported yet)`);
  for (const id of request.assetIds) {
    if (!chain.assets.some((a) => a.id === id.toLowerCase())) throw new ConfigError(`--asset: ${id} is not an asset of ${chainKey}`);
  }
  const wanted = request.assetIds.map((id) => id.toLowerCase());
  const assets = wanted.length === 0 ? chain.assets : chain.assets.filter((a) => wanted.includes(a.id));
  const previous = readDeployment(config.registryPath).chains[chainKey];

  const deployer = await loadDeployer();
  const deployment = await deployer({
    chain,
    access,
    deployerKey: request.deployerKey,
    assets,
    previous,
    wholeChain: wanted.length === 0,
    options: request.options,
    log: request.log,
  });
  // An earlier run's contracts of assets (or a FeeClaim) this run was not asked about stay recorded.
  const covered = (c: { contract: string; assets: string[] }) =>
    c.assets.some((id) => deployment.contracts.some((d) => d.assets.includes(id))) || (c.assets.length === 0 && deployment.contracts.some((d) => d.contract === c.contract));
  const kept = previous && previous.chain_id === deployment.chain_id ? previous.contracts.filter((c) => !covered(c)) : [];
  const recorded = (address: string) => previous?.contracts.find((c) => c.address.toLowerCase() === address.toLowerCase())?.transaction;
  const contracts = deployment.contracts.map((c) => {
    const transaction = c.transaction ?? recorded(c.address);
    return transaction ? { ...c, transaction } : c;
  });
  const merged: ChainDeployment = { ...deployment, contracts: [...kept, ...contracts] };
  const path = await writeChainDeployment(config.registryPath, chainKey, merged);
  return { path, deployment: merged, created: deployment.contracts.filter((c) => c.transaction !== undefined).length };
}
