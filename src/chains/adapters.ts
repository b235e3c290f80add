import type { TSchema } from '@sinclair/typebox';
import type { ChainAdapter, PartyMatchKey, ScriptKeys } from './adapter.ts';
import { bitcoinAggregator } from './aggregator-steps.ts';
import { bitcoinAdapter } from './bitcoin/adapter.ts';
import { evmAdapter } from './evm/adapter.ts';
import type { FamilyHtlc } from './family.ts';
import type { Chain } from './registry.ts';
import { HTLC_SCHEMAS, TOKEN_SCHEMAS, type Family } from './registry-schema.ts';
import { solanaAdapter } from './solana/adapter.ts';
import { starknetAdapter } from './starknet/adapter.ts';
import { tronAdapter } from './tron/adapter.ts';

/** The adapter of each chain family that has one (lightning, spark and hypercore do not yet). */
const ADAPTERS: Partial<Record<Family, ChainAdapter>> = {
  evm: evmAdapter,
  bitcoin: { ...bitcoinAdapter, aggregator: bitcoinAggregator },
  solana: solanaAdapter,
  starknet: starknetAdapter,
  tron: tronAdapter,
};

/**
 * Every body shape an order action takes on some family (PATCH /v2/orders/{id}), once each, with the
 * action in its title: for the OpenAPI document.
 */
export function actionBodyShapes(): TSchema[] {
  const shapes = new Set<TSchema>();
  for (const adapter of Object.values(ADAPTERS)) {
    for (const body of Object.values(adapter.actionBodies ?? {})) {
      if ('refused' in body) continue;
      for (const shape of (body.anyOf as TSchema[] | undefined) ?? [body]) shapes.add(shape);
    }
  }
  return [...shapes];
}

/** Every contract schema some family serves (`ChainAdapter.contractSchemas`), by name, in the registry's order of names. */
export function contractSchemas(): Array<{ name: string; schema: readonly object[] }> {
  const all = new Map<string, readonly object[]>();
  for (const adapter of Object.values(ADAPTERS)) for (const [name, schema] of Object.entries(adapter.contractSchemas ?? {})) all.set(name, schema);
  return [...HTLC_SCHEMAS, ...TOKEN_SCHEMAS].flatMap((name) => {
    const schema = all.get(name);
    return schema ? [{ name, schema }] : [];
  });
}

export const chainAdapter = (chain: Chain): ChainAdapter | undefined => ADAPTERS[chain.family];

/** The adapter of the family of a chain id (`<family>:<number>`, as the API shows a chain), if it has one. */
export const adapterOfChainId = (chainId: string): ChainAdapter | undefined => ADAPTERS[chainId.split(':')[0] as Family];

export const familyHtlc = (chain: Chain): FamilyHtlc | undefined => chainAdapter(chain)?.htlc;

/** How `chain`'s scripts name parties by key, where they do (see `ChainAdapter.scriptKeys`). */
export const scriptKeysOf = (chain: Chain): ScriptKeys | undefined => chainAdapter(chain)?.scriptKeys;

/** The canonical form of a party (address, or x-only key) on `chain`, or undefined. */
export const normalizeParty = (chain: Chain, value: string): string | undefined => chainAdapter(chain)?.normalizeParty(chain, value);

/**
 * How GET /v2/orders' address filters find `value`: each chain of `chains` where it names a party
 * gives its key, compared as that chain compares (`ChainAdapter.partyMatchKey`); none when it names
 * no party anywhere.
 */
export function partyMatchKeys(chains: readonly Chain[], value: string): PartyMatchKey[] {
  const keys = new Map<string, PartyMatchKey>();
  for (const chain of chains) {
    const match = chainAdapter(chain)?.partyMatchKey(chain, value);
    if (match) keys.set(`${match.exact}:${match.key}`, match);
  }
  return [...keys.values()];
}

/** Every stored form `value` takes as a transaction hash on one of `chains` (`ChainAdapter.txHashMatchKey`). */
export function txHashMatchKeys(chains: readonly Chain[], value: string): string[] {
  const keys = chains.map((chain) => chainAdapter(chain)?.txHashMatchKey(value));
  return [...new Set(keys.filter((k) => k !== undefined))];
}
