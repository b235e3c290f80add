import { resolve } from 'node:path';
import { DEV_CONFIG_PATH, loadServiceConfig, type LoadOptions, type ServiceConfig } from '../config/service-config.ts';
import { AppError } from '../errors.ts';
import { migrate, openStore, type Db } from '../store/database.ts';

/** The service config a command names with `--config`, else the dev config (its keys read unless `options.keys` is false). */
export const configOf = (file: string | undefined, options: LoadOptions = {}): ServiceConfig => loadServiceConfig(file ? resolve(file) : DEV_CONFIG_PATH, process.env, options);

/**
 * Opens the database the service would use (config, DATABASE_URL, HASHLOCK_DATA_DIR), migrated, runs
 * `work` on it and closes it. The config's keys are not read (no key password needed) unless `options` asks. An AppError is printed as one line and exits 1.
 */
export async function withDatabase(configFile: string | undefined, work: (db: Db, config: ServiceConfig) => Promise<void>, options: LoadOptions = { keys: false }): Promise<void> {
  const config = configOf(configFile, options);
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
