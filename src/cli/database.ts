import { resolve } from 'node:path';
import { DEV_CONFIG_PATH, loadServiceConfig, type ServiceConfig } from '../config/service-config.ts';
import { AppError } from '../errors.ts';
import { migrate, openStore, type Db } from '../store/database.ts';

/** The service config a command names with `--config`, else the dev config. */
export const configOf = (file: string | undefined): ServiceConfig => loadServiceConfig(file ? resolve(file) : DEV_CONFIG_PATH);

/**
 * Opens the database the service would use (config, DATABASE_URL, HASHLOCK_DATA_DIR), migrated, runs
 * `work` on it and closes it. An AppError is printed as one line and exits 1.
 */
export async function withDatabase(configFile: string | undefined, work: (db: Db, config: ServiceConfig) => Promise<void>): Promise<void> {
  const config = configOf(configFile);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  try {
    await migrate(store.db);
    await work(store.db, config);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    console.error(`error: ${err.message}`);
    process.exitCode = 1;
  } finally {
    await store.close();
  }
}
