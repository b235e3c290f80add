import type { HtlcTerms } from '../../../src/chains/family.ts';
import type { Asset, Chain } from '../../../src/chains/registry.ts';

export const HTLC = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
export const TOKEN = '0x03fe2b97c1fd336e750087d68b9b867997fd64a2661ff3ca5a7c771641e8e7ac';
export const INITIATOR = '0x064b48806902a367c8598f4f95c305e8c1a1acba5f082d294a43793113115691';
export const REDEEMER = '0x0305b946a388e416709b20b49b4919de92bebbf363b23887e1d14da4593d6204';
export const SECRET_HASH = 'a0b1c2d3e4f5061728394a5b6c7d8e9f00112233445566778899aabbccddeeff';

/** A Starknet chain with one WBTC asset, as the registry would build it. */
export function starknetChain(network = 'SN_MAIN', htlc = HTLC): Chain {
  const chain = {
    key: 'starknet',
    name: 'Starknet',
    id: 'starknet:9004',
    family: 'starknet',
    network,
    nativeAssetId: 'starknet:strk',
    icon: '',
    explorerUrl: 'https://voyager.online',
    blockTimeMs: 6000,
    confirmationTarget: 1,
    sourceTimelock: 14400,
    destinationTimelock: 1200,
    isActive: true,
    assets: [] as Asset[],
    htlcSchemas: ['starknet:htlc_erc20'],
    tokenSchemas: ['starknet:erc20'],
  } satisfies Chain;
  chain.assets.push({
    id: 'starknet:wbtc',
    chain,
    symbol: 'wbtc',
    name: 'Wrapped Bitcoin',
    icon: '',
    decimals: 8,
    htlc: { address: htlc, schema: 'starknet:htlc_erc20' },
    token: { address: TOKEN, schema: 'starknet:erc20' },
    minAmount: 10_000n,
    maxAmount: 500_000_000n,
    priceId: 'wrapped-bitcoin',
    isActive: true,
    listedIn: new Set(['v2', 'v3']),
  });
  return chain;
}

export function terms(overrides: Partial<HtlcTerms> = {}, chain = starknetChain()): HtlcTerms {
  const asset = chain.assets[0];
  if (!asset) throw new Error('fixture chain has no asset');
  return {
    asset,
    initiator: INITIATOR,
    redeemer: REDEEMER,
    timelock: 14_400n,
    amount: 50_000n,
    secretHash: SECRET_HASH,
    ...overrides,
  };
}
