import type { FastifyInstance } from 'fastify';
import { buildApi } from './api/app.ts';
import { loadRegistry, type Registry } from './chains/registry.ts';
import type { ServiceConfig } from './config/service-config.ts';
import { StaticPriceSource } from './pricing/price-source.ts';
import { checkSolvers } from './solver/solver-config.ts';
import { migrate, openStore, type Store } from './store/database.ts';
import { syncRegistry } from './store/registry-sync.ts';
import { syncSolvers } from './store/solvers.ts';
import { VERSION } from './version.ts';

export interface Service {
  store: Store;
  registry: Registry;
  api: FastifyInstance;
  url: string;
  stop: () => Promise<void>;
}

/** Opens the database, migrates it, loads and syncs the registry and solvers, and serves the API. */
export async function startService(config: ServiceConfig): Promise<Service> {
  const registry = loadRegistry(config.registryPath);
  checkSolvers(config.solvers, registry, 'config');
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(store.db);
    await syncRegistry(store.db, registry);
    await syncSolvers(store.db, config.solvers);
    const api = await buildApi({
      store,
      registry,
      prices: new StaticPriceSource(config.prices),
      version: VERSION,
      logger: { level: config.logLevel },
      orderCacheMs: config.orderCacheMs,
    });
    const address = await api.listen({ port: config.port, host: config.host });
    return {
      store,
      registry,
      api,
      url: address,
      stop: async () => {
        await api.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
