import type { FastifyInstance } from 'fastify';
import { buildApi, type ApiOptions } from '../../src/api/app.ts';
import { loadRegistry, type Registry } from '../../src/chains/registry.ts';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import { buildStrategies } from '../../src/pricing/strategies.ts';
import type { Store, StoreKind } from '../../src/store/database.ts';
import { LOCALNET_REGISTRY_PATH, seedBasics, SOLVER, TEST_STRATEGIES } from './fixtures.ts';
import { openTestStore } from './stores.ts';

export const TEST_PRICES = { bitcoin: 95000, 'usd-coin': 1, ethereum: 3200, litecoin: 90 };

export interface TestApi {
  api: FastifyInstance;
  registry: Registry;
  store: Store;
  key: string;
  appId: string;
  /** The API's secret box (what it seals webhook secrets with). */
  secrets: SecretBox;
  close(): Promise<void>;
}

/** A fresh store seeded with the registry, the test solver and one app, and an API over it. */
export async function openTestApi(
  kind: StoreKind,
  registryPath = LOCALNET_REGISTRY_PATH,
  options: Pick<ApiOptions, 'rateLimits' | 'trustProxy' | 'routePolicy' | 'eventStreams' | 'nodeHealth' | 'clock' | 'orderCacheMs' | 'solverStandingMs' | 'solverFundWithinSeconds' | 'solverQuoteDeadlineMs' | 'solverMatchFirst'> = {},
): Promise<TestApi> {
  const store = await openTestStore(kind);
  const registry = loadRegistry(registryPath);
  const { app, key } = await seedBasics(store.db, registry);
  const localnet = registry.network === 'localnet';
  const secrets = new SecretBox(randomBytes(32));
  const api = await buildApi({
    store,
    registry,
    prices: new StaticPriceSource(TEST_PRICES),
    strategies: localnet ? buildStrategies(TEST_STRATEGIES, [SOLVER], registry) : [],
    solvers: localnet ? [SOLVER] : [],
    secrets,
    affiliateFeeAssets: localnet ? ['ethereum_localnet:usdc', 'arbitrum_localnet:usdc'] : [],
    version: 'test',
    ...options,
  });
  await api.ready();
  return {
    api,
    registry,
    store,
    key,
    appId: app.id,
    secrets,
    close: async () => {
      await api.close();
      await store.close();
    },
  };
}
