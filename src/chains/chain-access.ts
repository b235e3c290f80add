import type { ChainAccessConfig } from '../config/service-config.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { SigningOptions } from './family.ts';
import { normalizeParty } from './families.ts';
import type { Asset, Registry } from './registry.ts';
import { RecentBlockhash } from './solana/rpc.ts';

export type ChainSigningOptions = (asset: Asset) => Promise<Omit<SigningOptions, 'gasless'>>;

/**
 * What building a chain's transactions needs from the chain itself, per the config's `chains`
 * section: the relayer account, and for Solana a recent blockhash from its RPC.
 */
export function chainSigningOptions(chains: Record<string, ChainAccessConfig>, registry: Registry): ChainSigningOptions {
  const access = new Map<string, { relayer?: string; blockhash?: RecentBlockhash }>();
  for (const [key, config] of Object.entries(chains)) {
    const chain = registry.chain(key);
    if (!chain) throw new ConfigError(`config: chains.${key}: no chain ${key} in the registry`);
    if (config.relayer !== undefined && normalizeParty(chain, config.relayer) === undefined) {
      throw new ConfigError(`config: chains.${key}.relayer: ${config.relayer} is not a valid address on ${key}`);
    }
    access.set(key, {
      ...(config.relayer !== undefined ? { relayer: config.relayer } : {}),
      ...(chain.family === 'solana' && config.rpc_url ? { blockhash: new RecentBlockhash(config.rpc_url) } : {}),
    });
  }
  return async (asset) => {
    const chain = access.get(asset.chain.key);
    if (!chain) return {};
    return {
      ...(chain.relayer !== undefined ? { relayer: chain.relayer } : {}),
      ...(chain.blockhash ? { recentBlockhash: await chain.blockhash.get() } : {}),
    };
  };
}
