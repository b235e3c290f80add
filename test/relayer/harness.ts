// Two real anvil chains with the localnet contracts, an API over a fresh store with the relayed order
// actions, and one relayer worker per chain running in the background.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, sha256, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount, type HDAccount } from 'viem/accounts';
import { buildApi } from '../../src/api/app.ts';
import type { Registry } from '../../src/chains/registry.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { deployLocalnet, type EvmDeployment } from '../../src/localnet/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import { buildStrategies } from '../../src/pricing/strategies.ts';
import { readHtlcOrder } from '../../src/chains/evm/htlc-reads.ts';
import { evmEngine, type EvmEngine } from '../../src/chains/evm/driver.ts';
import { engineWorkers } from '../../src/engine/engine.ts';
import { evmClientActions } from '../../src/chains/evm/client-actions.ts';
import { runWorker } from '../../src/lease-loop.ts';
import type { ClientActions } from '../../src/chains/adapter.ts';
import type { Store, StoreKind } from '../../src/store/database.ts';
import { findJob, type RelayerJob } from '../../src/store/relayer-jobs.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { TEST_PRICES } from '../helpers/api.ts';
import { seedBasics, SOLVER, TEST_STRATEGIES } from '../helpers/fixtures.ts';
import { openTestStore } from '../helpers/stores.ts';

export const CHAINS = { ethereum_localnet: 31337, arbitrum_localnet: 31338 } as const;
export type ChainKey = keyof typeof CHAINS;

export interface LocalChain {
  key: ChainKey;
  node: AnvilNode;
  client: PublicClient;
  deployment: EvmDeployment;
  wallet(account: HDAccount): ReturnType<typeof createWalletClient>;
  wbtcBalance(address: Address): Promise<bigint>;
}

/** Starts both chains and deploys the localnet contracts (the addresses the registry names). */
export async function startChains(registry: Registry): Promise<Record<ChainKey, LocalChain>> {
  const entries = await Promise.all(
    (Object.entries(CHAINS) as Array<[ChainKey, number]>).map(async ([key, chainId]): Promise<[ChainKey, LocalChain]> => {
      const node = await startAnvil({ chainId });
      const deployment = await deployLocalnet(registry.chain(key)!, node.rpcUrl, chainId);
      const client = createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0, pollingInterval: 20 });
      const chain = { id: chainId, name: key, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [node.rpcUrl] } } };
      return [
        key,
        {
          key,
          node,
          client,
          deployment,
          wallet: (account) => createWalletClient({ account, chain, transport: http(node.rpcUrl) }),
          wbtcBalance: (address) => client.readContract({ address: deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
        },
      ];
    }),
  );
  return Object.fromEntries(entries) as Record<ChainKey, LocalChain>;
}

export interface ActionsApi {
  api: FastifyInstance;
  store: Store;
  key: string;
  relayers: Record<ChainKey, EvmEngine>;
  close(): Promise<void>;
}

/**
 * A fresh store (seeded, the solver funded) and an API with the relayed order actions over the two
 * chains. `wait` is how long an action waits for its relayer before answering.
 */
/** The actions of other chain families, by chain key, made over the store and secret box of the API. */
export type MoreActions = (db: Store['db'], secrets: SecretBox) => Record<string, ClientActions>;

export async function openRelayedApi(
  kind: StoreKind,
  registry: Registry,
  chains: Record<ChainKey, LocalChain>,
  wait: { waitMs: number; pollMs: number; moreActions?: MoreActions },
) {
  const store = await openTestStore(kind);
  const { key } = await seedBasics(store.db, registry);
  for (const asset of ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', 'ethereum_localnet:eth', 'arbitrum_localnet:eth']) {
    await setSolverBalance(store.db, { solverId: SOLVER.id, asset, balance: 10n ** 20n });
  }
  const solverAccount = privateKeyToAccount(privateKeyOf(devAccount('solver')));
  const secrets = new SecretBox(randomBytes(32));
  const rpc = Object.fromEntries((Object.keys(CHAINS) as ChainKey[]).map((k) => [k, chains[k].node.rpcUrl])) as Record<ChainKey, string>;
  const readClients = new Map((Object.keys(CHAINS) as ChainKey[]).map((k) => [k as string, createPublicClient({ transport: http(rpc[k]), cacheTime: 0 })]));
  const more = wait.moreActions?.(store.db, secrets) ?? {};
  const actionsFor = (chainKey: string): ClientActions | undefined => {
    const client = readClients.get(chainKey);
    return client ? evmClientActions(store.db, registry, { client, solverSigner: solverAccount }) : more[chainKey];
  };
  const api = await buildApi({
    store,
    registry,
    prices: new StaticPriceSource(TEST_PRICES),
    strategies: buildStrategies(TEST_STRATEGIES, [SOLVER], registry),
    solvers: [SOLVER],
    secrets,
    version: 'test',
    relayer: {
      actionsFor,
      waitMs: wait.waitMs,
      pollMs: wait.pollMs,
    },
  });
  await api.ready();
  return { api, store, key, solverAccount, secrets, rpc, actionsFor };
}

/** A fresh store and API with the order actions, and the relayers running until close. */
export async function openActionsApi(kind: StoreKind, registry: Registry, chains: Record<ChainKey, LocalChain>): Promise<ActionsApi> {
  const { api, store, key } = await openRelayedApi(kind, registry, chains, { waitMs: 5_000, pollMs: 20 });
  const relayers = Object.fromEntries(
    (Object.keys(CHAINS) as ChainKey[]).map((k) => [
      k,
      evmEngine({
        db: store.db,
        chain: k,
        chainId: CHAINS[k],
        rpcUrl: chains[k].node.rpcUrl,
        privateKey: privateKeyOf(devAccount('relayer')),
        recheckMs: 50,
        retryMs: 200,
      }),
    ]),
  ) as Record<ChainKey, EvmEngine>;
  const loops = Object.values(relayers).flatMap((r) => engineWorkers(r, 20).map((w) => runWorker(r.db, w, { holder: 'test', onError: () => undefined })));
  return {
    api,
    store,
    key,
    relayers,
    close: async () => {
      await Promise.all(loops.map((loop) => loop.stop()));
      await api.close();
      await store.close();
    },
  };
}

export function newSecret(): { secret: Hex; secretHash: Hex } {
  const secret: Hex = `0x${randomBytes(32).toString('hex')}`;
  return { secret, secretHash: sha256(secret) };
}

/** Waits until the job of `key` is settled (confirmed or failed). */
export async function settled(store: Store, key: string, timeoutMs = 10_000): Promise<RelayerJob> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await findJob(store.db, key);
    if (job && (job.status === 'confirmed' || job.status === 'failed')) return job;
    if (Date.now() > until) throw new Error(`job ${key} not settled: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const htlcOrder = (chain: LocalChain, swapId: string) =>
  readHtlcOrder(chain.client, chain.deployment.contracts.wbtcHtlc, `0x${swapId}`);

export const checksum = (a: string): Address => getAddress(a);
