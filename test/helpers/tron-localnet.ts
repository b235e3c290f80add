// The local Tron chain in tests: its registry entry (kept out of config/registry.localnet.json until the
// Tron adapter settles orders), a chain started on free ports with the test USDT and HTLC deployed, and
// an unmodified TronWeb per dev account.
import { readFileSync } from 'node:fs';
import { TronWeb } from 'tronweb';
import { Registry, type Chain } from '../../src/chains/registry.ts';
import type { RegistryChain, RegistryFile } from '../../src/chains/registry-schema.ts';
import { LOCALNET_REGISTRY_PATH } from './fixtures.ts';
import { evmHexToTron } from '../../src/chains/tron/address.ts';
import { devAccount, privateKeyOf, type DEV_ACCOUNTS } from '../../src/localnet/accounts.ts';
import { deployTronLocalnet, type TronDeployment } from '../../src/localnet/tron/devnet.ts';
import { startTronLocalnet, type TronLocalnet, type TronLocalnetOptions } from '../../src/localnet/tron/local-chain.ts';

/** The local Tron chain as the localnet registry will name it: the deployer's first two contracts are the USDT and its HTLC. */
export const TRON_LOCALNET_CHAIN: RegistryChain = {
  chain: 'tron_localnet',
  name: 'Tron Localnet',
  id: 'tron:728126428',
  network: 'localnet',
  native_asset: 'trx',
  icon: '',
  explorer_url: '',
  block_time_ms: 3000,
  confirmation_target: 1,
  source_timelock: 200,
  destination_timelock: 50,
  is_active: true,
  assets: [
    {
      symbol: 'usdt',
      name: 'Tether USD (test)',
      icon: '',
      decimals: 6,
      htlc: { address: 'TX7cLPN5XdNGBzyF9ti4nsHCPZhq7qqJ7C', schema: 'tron:htlc_trc20' },
      token: { address: 'TJhSSbZ8dVqtEiLYgva1WWcV4R4NkRCARH', schema: 'tron:trc20' },
      min_amount: '1000000',
      max_amount: '1000000000000',
      price_id: 'tether',
      is_active: true,
      listed_in: ['v2', 'v3'],
    },
  ],
};

export const tronLocalnetChain = (): Chain => new Registry({ network: 'localnet', chains: [TRON_LOCALNET_CHAIN] }).chain('tron_localnet')!;

export type DevRole = keyof typeof DEV_ACCOUNTS;

/** A dev account's base58 Tron address. */
export const tronAddressOf = (role: DevRole): string => evmHexToTron(devAccount(role).address);

export interface TronTestChain {
  localnet: TronLocalnet;
  deployment: TronDeployment;
  /** An unmodified TronWeb on the local chain, signing as `role`. */
  tronWeb(role: DevRole): TronWeb;
  stop(): Promise<void>;
}

/** Starts the local Tron chain (a block per transaction unless told) on a free port and deploys the test USDT and HTLC. */
export async function startTronTestChain(options: TronLocalnetOptions = {}): Promise<TronTestChain> {
  const localnet = await startTronLocalnet({ blockTimeMs: 0, solidifyDepth: 1, ...options });
  try {
    const deployment = await deployTronLocalnet(tronLocalnetChain(), localnet);
    return {
      localnet,
      deployment,
      tronWeb: (role) => new TronWeb({ fullHost: localnet.url, privateKey: privateKeyOf(devAccount(role)).slice(2) }),
      stop: () => localnet.stop(),
    };
  } catch (err) {
    await localnet.stop();
    throw err;
  }
}

/** A dev account's private key as TronWeb takes it (hex, no 0x). */
export const tronPrivateKey = (role: DevRole): string => privateKeyOf(devAccount(role)).slice(2);

/** The localnet registry with tron_localnet beside its chains, as it will be once Tron is registered there. */
export function tronTestRegistry(): Registry {
  const localnet = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as RegistryFile;
  return new Registry({ ...localnet, chains: [...localnet.chains, TRON_LOCALNET_CHAIN] });
}
