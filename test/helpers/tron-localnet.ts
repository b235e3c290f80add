// The local Tron chain in tests: its registry entry (config/registry.localnet.json's tron_localnet), a
// chain started on free ports with the test USDT and HTLC deployed, the service's API client of it, an
// unmodified TronWeb per dev account, a job's engine ticked until it settles there, and the dev config
// on tron_localnet and ethereum_localnet alone (on the test registry: a Tron block every second).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TronWeb } from 'tronweb';
import { Registry, type Chain } from '../../src/chains/registry.ts';
import type { RegistryChain, RegistryFile } from '../../src/chains/registry-schema.ts';
import { LOCALNET_REGISTRY_PATH } from './fixtures.ts';
import { testRegistryFile } from './test-registry.ts';
import { evmHexToTron } from '../../src/chains/tron/address.ts';
import { TronApi } from '../../src/chains/tron/api.ts';
import { DEV_CONFIG_PATH, loadServiceConfig, type ServiceConfig } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf, type DEV_ACCOUNTS } from '../../src/localnet/accounts.ts';
import { deployTronLocalnet, type TronDeployment } from '../../src/localnet/tron/devnet.ts';
import { startTronLocalnet, type TronLocalnet, type TronLocalnetOptions } from '../../src/localnet/tron/local-chain.ts';
import type { Db } from '../../src/store/database.ts';
import { findJob, type RelayerJob } from '../../src/store/relayer-jobs.ts';

/** The local Tron chain as the localnet registry names it: the deployer's first two contracts are the USDT and its HTLC. */
export const TRON_LOCALNET_CHAIN: RegistryChain = (JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as RegistryFile).chains.find((c) => c.chain === 'tron_localnet')!;

export const tronLocalnetChain = (): Chain => new Registry({ network: 'localnet', chains: [TRON_LOCALNET_CHAIN] }).chain('tron_localnet')!;

export type DevRole = keyof typeof DEV_ACCOUNTS;

/** A dev account's base58 Tron address. */
export const tronAddressOf = (role: DevRole): string => evmHexToTron(devAccount(role).address);

export interface TronTestChain {
  localnet: TronLocalnet;
  deployment: TronDeployment;
  /** The service's HTTP API client of the chain. */
  api: TronApi;
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
      api: new TronApi(localnet.url),
      tronWeb: (role) => new TronWeb({ fullHost: localnet.url, privateKey: privateKeyOf(devAccount(role)).slice(2) }),
      stop: () => localnet.stop(),
    };
  } catch (err) {
    await localnet.stop();
    throw err;
  }
}

/**
 * The dev config on tron_localnet and ethereum_localnet alone (the test registry's, a Tron block every
 * second, written to `dataDir`), in process on PGlite: the solver quotes Tron USDT <-> ethereum_localnet
 * USDC both ways at 10 bips, USDT priced at 1, the affiliate fee taken in USDC.
 */
export function tronDevConfig(dataDir: string): ServiceConfig {
  const test = testRegistryFile();
  const registryPath = join(dataDir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify({ ...test, chains: test.chains.filter((c) => c.chain === 'ethereum_localnet' || c.chain === 'tron_localnet') }));
  const base = loadServiceConfig(DEV_CONFIG_PATH, {});
  const solverId = base.solvers[0]!.id;
  return {
    ...base,
    port: 0,
    dataDir,
    databaseUrl: undefined,
    logLevel: 'warn',
    registryPath,
    prices: { ...base.prices, tether: 1 },
    affiliateFeeAssets: ['ethereum_localnet:usdc'],
    solvers: [{ ...base.solvers[0]!, addresses: { ethereum_localnet: devAccount('solver').address, tron_localnet: tronAddressOf('solver') } }],
    strategies: [
      { solver: solverId, from: ['tron_localnet:usdt'], to: ['ethereum_localnet:usdc'], fee_bips: 10 },
      { solver: solverId, from: ['ethereum_localnet:usdc'], to: ['tron_localnet:usdt'], fee_bips: 10 },
    ],
  };
}

/** A dev account's private key as TronWeb takes it (hex, no 0x). */
export const tronPrivateKey = (role: DevRole): string => privateKeyOf(devAccount(role)).slice(2);

/**
 * Ticks `engine` until the job `key` is confirmed or failed, mining a block of the local chain after
 * each tick (a transaction lands once solidified, a block later); ten ticks at most. The job as it is then.
 */
export async function settleTronJob(db: Db, chain: TronTestChain, engine: { tick(): Promise<unknown> }, key: string): Promise<RelayerJob> {
  for (let i = 0; i < 10; i++) {
    await engine.tick();
    const job = (await findJob(db, key))!;
    if (job.status === 'confirmed' || job.status === 'failed') return job;
    await chain.localnet.mine();
  }
  return (await findJob(db, key))!;
}
