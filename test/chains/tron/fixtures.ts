import { privateKeyToAccount } from 'viem/accounts';
import type { HtlcTerms } from '../../../src/chains/family.ts';
import type { Asset, Chain } from '../../../src/chains/registry.ts';
import { evmHexToTron } from '../../../src/chains/tron/index.ts';

/** Real mainnet address pairs (base58 ↔ 41-hex), as published by Tron tooling. */
export const USDT = { base58: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', hex41: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' };
export const PAIRS = [
  USDT,
  { base58: 'TLrPF5aTqtqLxFo1Y69jpQvZ2T4ydkX9pC', hex41: '41775f057150b85086f456aac88fd52ba8e35db282' },
  { base58: 'THPvaUhoh2Qn2y9THCZML3H815hhFhn5YC', hex41: '41517591d35d313bf6a5e33098284502b045e2bc08' },
];

/** Hardhat's well-known first test key: the initiator signs with it. */
export const INITIATOR_ACCOUNT = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
export const INITIATOR = evmHexToTron(INITIATOR_ACCOUNT.address);
export const REDEEMER = 'TLrPF5aTqtqLxFo1Y69jpQvZ2T4ydkX9pC';
export const HTLC = 'THPvaUhoh2Qn2y9THCZML3H815hhFhn5YC';
export const SECRET_HASH = 'a0b1c2d3e4f5061728394a5b6c7d8e9f00112233445566778899aabbccddeeff';

export function tronChain(htlc = HTLC, id = 'tron:728126428'): Chain {
  const chain = {
    key: 'tron',
    name: 'Tron',
    id,
    family: 'tron',
    network: 'mainnet',
    nativeAssetId: 'tron:trx',
    icon: '',
    explorerUrl: 'https://tronscan.org',
    blockTimeMs: 3000,
    confirmationTarget: 19,
    sourceTimelock: 28800,
    destinationTimelock: 2400,
    isActive: true,
    assets: [] as Asset[],
    htlcSchemas: ['tron:htlc_trc20'],
    tokenSchemas: ['tron:trc20'],
  } satisfies Chain;
  chain.assets.push({
    id: 'tron:usdt',
    chain,
    symbol: 'usdt',
    name: 'Tether USD',
    icon: '',
    decimals: 6,
    htlc: { address: htlc, schema: 'tron:htlc_trc20' },
    token: { address: USDT.base58, schema: 'tron:trc20' },
    minAmount: 10_000_000n,
    maxAmount: 450_000_000_000n,
    priceId: 'tether',
    isActive: true,
    listedIn: new Set(['v2']),
  });
  return chain;
}

export function terms(overrides: Partial<HtlcTerms> = {}, chain = tronChain()): HtlcTerms {
  const asset = chain.assets[0];
  if (!asset) throw new Error('fixture chain has no asset');
  return {
    asset,
    initiator: INITIATOR,
    redeemer: REDEEMER,
    timelock: 28_800n,
    amount: 25_000_000n,
    secretHash: SECRET_HASH,
    ...overrides,
  };
}
