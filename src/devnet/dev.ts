import { join } from 'node:path';
import type { ServiceConfig } from '../config/service-config.ts';
import { loadRegistry } from '../chains/registry.ts';
import { startService, type Service } from '../service.ts';
import { createApp, findAppByKey } from '../store/apps.ts';
import { startAnvil } from './anvil.ts';
import { startLitecoinDevnet, type LitecoinDevnet } from './litecoin-devnet.ts';
import { hexToBytes } from '@noble/curves/utils.js';
import { xOnlyPublicKeyOf } from '../chains/bitcoin/address.ts';

const xOnlyOf = (privateKey: `0x${string}`): string => xOnlyPublicKeyOf(hexToBytes(privateKey.slice(2)));
import { devnetPath, readDevnetFile, updateDevnetFile } from './devnet-file.ts';
import { deployLocalnet, devAccount, privateKeyOf, type EvmDeployment } from './evm-devnet.ts';

/** The local EVM chains `hashlock dev` runs: key in the localnet registry and chain id. */
export const LOCAL_EVM_CHAINS = [
  { key: 'ethereum_localnet', chainId: 31337 },
  { key: 'arbitrum_localnet', chainId: 31338 },
] as const;

export interface DevOptions {
  /** Seconds between blocks on the local EVM chains (1 by default); 0 mines each transaction at once. */
  blockTimeSec?: number;
  /** Milliseconds between Litecoin regtest blocks (the registry's block time by default); 0 mines none. */
  litecoinBlockTimeMs?: number;
}

export interface Dev {
  service: Service;
  chains: EvmDeployment[];
  /** The Litecoin regtest node, when litecoind is installed. */
  litecoin: LitecoinDevnet | undefined;
  apiUrl: string;
  appKey: string;
  stop: () => Promise<void>;
}

/** How often the devnet's anvils save their state (they also save it on a clean exit). */
export const ANVIL_STATE_INTERVAL_SEC = 2;

/**
 * `hashlock dev` (`npm start`): two anvil chains (their state kept in the data dir, so a restart
 * resumes), the contracts and test tokens deployed and funded, and the whole service on the embedded
 * database. A development app is created on first start; its key stays in devnet.json.
 */
export async function startDev(config: ServiceConfig, options: DevOptions = {}): Promise<Dev> {
  const registry = loadRegistry(config.registryPath);
  const nodes: Array<{ stop(): Promise<void> }> = [];
  const stopNodes = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    const deployments: EvmDeployment[] = [];
    for (const { key, chainId } of LOCAL_EVM_CHAINS) {
      const chain = registry.chain(key);
      if (!chain) throw new Error(`the registry ${config.registryPath} has no chain ${key}`);
      // Deploy with instant mining, then mine a block a second like a real chain. The state is saved
      // every few seconds as well as on exit, so a crash loses seconds of chain, not the session.
      const node = await startAnvil({ chainId, stateFile: join(config.dataDir, `anvil-${key}.json`), stateIntervalSec: ANVIL_STATE_INTERVAL_SEC });
      nodes.push(node);
      deployments.push(await deployLocalnet(chain, node.rpcUrl, chainId));
      const blockTimeSec = options.blockTimeSec ?? 1;
      if (blockTimeSec > 0) await node.rpc('evm_setIntervalMining', [blockTimeSec]);
    }
    const relayer = devAccount('relayer').address;
    const chains = { ...config.chains };
    for (const d of deployments) {
      chains[d.chain] = { ...chains[d.chain], rpc_url: d.rpcUrl, ws_url: d.rpcUrl.replace(/^http/, 'ws'), relayer, fee_claim: d.contracts.feeClaim };
    }
    // The dev accounts' public keys sign for the relayer and the solver unless the environment names others.
    const keys = {
      relayer: config.keys.relayer ?? privateKeyOf(devAccount('relayer')),
      solver: config.keys.solver ?? privateKeyOf(devAccount('solver')),
      feeSigner: config.keys.feeSigner ?? privateKeyOf(devAccount('feeSigner')),
    };
    // The Litecoin regtest chain, when Litecoin Core is installed.
    const litecoinChain = registry.chains.find((c) => c.network === 'litecoin_regtest');
    const litecoin =
      litecoinChain &&
      (await startLitecoinDevnet({
        dataDir: config.dataDir,
        chain: litecoinChain,
        solverKey: hexToBytes(keys.solver.slice(2)),
        userKey: hexToBytes(privateKeyOf(devAccount('user')).slice(2)),
        blockTimeMs: options.litecoinBlockTimeMs ?? litecoinChain.blockTimeMs,
      }));
    if (litecoin) {
      nodes.push(litecoin);
      chains[litecoin.chain.key] = { ...chains[litecoin.chain.key], rpc_url: litecoin.node.rpcUrl, rpc_cookie_file: litecoin.node.cookieFile };
    } else if (litecoinChain) {
      console.warn(`litecoind is not on the PATH: ${litecoinChain.key} stays off (install Litecoin Core, e.g. apt-get install litecoind)`);
    }
    const service = await startService({ ...config, chains, keys });
    let appKey = readDevnetFile(config.dataDir).app_key;
    if (!appKey || !(await findAppByKey(service.store.db, appKey))) {
      appKey = (await createApp(service.store.db, { name: 'devnet', gasless: true })).key;
    }
    const user = devAccount('user');
    updateDevnetFile(config.dataDir, {
      api_url: service.url,
      app_key: appKey,
      chains: {
        ...Object.fromEntries(deployments.map((d) => [d.chain, { chain_id: d.chainId, rpc_url: d.rpcUrl, contracts: d.contracts }])),
        ...(litecoin ? { [litecoin.chain.key]: { rpc_url: litecoin.node.rpcUrl, rpc_cookie_file: litecoin.node.cookieFile } } : {}),
      },
      accounts: {
        // On the Litecoin chain the same private key is a taproot key: its x-only key and key-path address.
        user: {
          address: user.address,
          private_key: privateKeyOf(user),
          ...(litecoin ? { litecoin: { address: litecoin.userWallet, x_only: xOnlyOf(privateKeyOf(user)) } } : {}),
        },
        solver: { address: devAccount('solver').address, ...(litecoin ? { litecoin: { address: litecoin.solverWallet } } : {}) },
        relayer: { address: relayer },
      },
    });
    return {
      service,
      chains: deployments,
      litecoin,
      apiUrl: service.url,
      appKey,
      stop: async () => {
        await service.stop();
        await stopNodes();
      },
    };
  } catch (err) {
    await stopNodes();
    throw err;
  }
}

export function describeDev(config: ServiceConfig, dev: Dev): string {
  return [
    '',
    `  Hashlock dev service is running (${config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`})`,
    `  API      ${dev.apiUrl}`,
    `  API key  ${dev.appKey}   (send it as the service-app-id header)`,
    `  Docs     ${dev.apiUrl}/docs`,
    ...dev.chains.map((c) => `  Chain    ${c.chain.padEnd(18)} ${c.rpcUrl} (chain id ${c.chainId})`),
    ...(dev.litecoin ? [`  Chain    ${dev.litecoin.chain.key.padEnd(18)} ${dev.litecoin.node.rpcUrl} (regtest, cookie ${dev.litecoin.node.cookieFile})`] : []),
    `  Written  ${devnetPath(config.dataDir)}`,
    '',
    `  try: curl -H 'service-app-id: ${dev.appKey}' '${dev.apiUrl}/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000'`,
    '',
  ].join('\n');
}
