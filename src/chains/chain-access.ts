import type { ChainAccessConfig } from '../config/service-config.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { SigningOptions } from './family.ts';
import { chainAdapter, normalizeParty } from './adapters.ts';
import type { Asset, Registry } from './registry.ts';

export type ChainSigningOptions = (asset: Asset) => Promise<Omit<SigningOptions, 'gasless'>>;

/**
 * What building a chain's transactions needs from the chain itself, per the config's `chains`
 * section: the relayer account, and the chain state its family reads through the RPC (Solana: a recent blockhash).
 */
export function chainSigningOptions(chains: Record<string, ChainAccessConfig>, registry: Registry): ChainSigningOptions {
  const access = new Map<string, { relayer?: string; signingAccess?: () => Promise<Partial<SigningOptions>> }>();
  for (const [key, config] of Object.entries(chains)) {
    const chain = registry.chain(key);
    if (!chain) throw new ConfigError(`config: chains.${key}: no chain ${key} in the registry`);
    if (config.relayer !== undefined && normalizeParty(chain, config.relayer) === undefined) {
      throw new ConfigError(`config: chains.${key}.relayer: ${config.relayer} is not a valid address on ${key}`);
    }
    if (config.fee_claim !== undefined && !chainAdapter(chain)?.feeClaims) {
      throw new ConfigError(`config: chains.${key}.fee_claim: ${chain.family} chains have no FeeClaim contract`);
    }
    const signingAccess = config.rpc_url ? chainAdapter(chain)?.signingAccess?.(config.rpc_url) : undefined;
    access.set(key, { ...(config.relayer !== undefined ? { relayer: config.relayer } : {}), ...(signingAccess ? { signingAccess } : {}) });
  }
  return async (asset) => {
    const chain = access.get(asset.chain.key);
    if (!chain) return {};
    return {
      ...(chain.relayer !== undefined ? { relayer: chain.relayer } : {}),
      ...(chain.signingAccess ? await chain.signingAccess() : {}),
    };
  };
}
