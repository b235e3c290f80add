import type { ChainAccessConfig } from '../config/service-config.ts';
import type { Asset, Chain } from '../chains/registry.ts';
import type { ChainDeployment } from './deployment-file.ts';

/**
 * What `hashlock deploy` hands a family's deployer for one chain (`ChainAdapter.deployer`). The deployer
 * reaches the chain through `access` alone (its public RPC or HTTP API: no dev-node methods), signs with
 * `deployerKey`, and is idempotent: a contract or program already on chain (found by its code hash) is
 * taken, not deployed again.
 */
export interface DeployContext {
  chain: Chain;
  access: ChainAccessConfig;
  /**
   * The deployer's secret: a 32-byte secp256k1 private key for EVM and Tron, a 32-byte ed25519 seed for
   * Solana.
   */
  deployerKey: Uint8Array;
  /** The assets whose HTLCs to deploy (all the chain's, or those `--asset` named). */
  assets: readonly Asset[];
  /** No `--asset` was named: the chain's contracts that serve no one asset too (EVM's FeeClaim). */
  wholeChain: boolean;
  /** What the deployment file recorded for this chain before, if anything. */
  previous: ChainDeployment | undefined;
  /**
   * Family options from the command line: `feeSigner` (EVM: the address FeeClaim names as its
   * signer), `upgradeAuthority` (Solana: the programs' upgrade authority, base58).
   */
  options: Readonly<Record<string, string>>;
  /** One line per step, for the operator. */
  log: (line: string) => void;
}

/**
 * Deploys what the chain lacks and answers the chain's deployment as it now stands (every contract of
 * `ctx.assets`, found or deployed). Throws `WrongChainError` before sending anything when the node
 * serves another chain than the registry names.
 */
export type FamilyDeployer = (ctx: DeployContext) => Promise<ChainDeployment>;

/** The node serves another chain than the registry names: nothing is deployed. */
export class WrongChainError extends Error {
  constructor(
    readonly chainKey: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${chainKey}: the node serves chain ${actual}, the registry names ${expected}; nothing was deployed`);
    this.name = 'WrongChainError';
  }
}
