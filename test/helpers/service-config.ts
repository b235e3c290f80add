import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_CONFIG_PATH, loadServiceConfig, type ServiceConfig } from '../../src/config/service-config.ts';
import type { StoreKind } from '../../src/store/database.ts';
import { LOCALNET_REGISTRY_PATH } from './fixtures.ts';
import { createDatabase } from './stores.ts';

/**
 * The dev config file without chains, with `fields` over it, loaded as `startService` reads it, on a
 * fresh database of the kind (a data dir on disk for PGlite, so it outlives a restart). On PostgreSQL
 * every instance must share HASHLOCK_SECRET_KEY: one is set until `drop`.
 */
export async function chainlessServiceConfig(kind: StoreKind, fields: Record<string, unknown> = {}): Promise<{ config: ServiceConfig; drop: () => Promise<void> }> {
  const dev = JSON.parse(readFileSync(DEV_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-service-'));
  const path = join(dir, 'hashlock.json');
  writeFileSync(path, JSON.stringify({ ...dev, registry: LOCALNET_REGISTRY_PATH, chains: {}, port: 0, data_dir: dir, log_level: 'silent', ...fields }));
  if (kind === 'pglite') return { config: loadServiceConfig(path, {}), drop: async () => undefined };
  const db = await createDatabase(process.env.DATABASE_URL!, 'hashlock_test');
  const savedKey = process.env.HASHLOCK_SECRET_KEY;
  process.env.HASHLOCK_SECRET_KEY = randomBytes(32).toString('hex');
  const drop = async () => {
    if (savedKey === undefined) delete process.env.HASHLOCK_SECRET_KEY;
    else process.env.HASHLOCK_SECRET_KEY = savedKey;
    await db.drop();
  };
  return { config: loadServiceConfig(path, { DATABASE_URL: db.url }), drop };
}

const EVM_CHAINS = ['ethereum_localnet', 'arbitrum_localnet'];

/** The dev config on the two EVM chains only: the cheapest real swap, whatever else this machine could run. */
export function evmOnlyConfig(dataDir: string): ServiceConfig {
  const base = loadServiceConfig(DEV_CONFIG_PATH, {});
  const registry = JSON.parse(readFileSync(base.registryPath, 'utf8')) as { chains: Array<{ chain: string }> };
  registry.chains = registry.chains.filter((c) => EVM_CHAINS.includes(c.chain));
  const registryPath = join(dataDir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify(registry));
  const onEvm = (ids: string | string[]) => [ids].flat().every((id) => EVM_CHAINS.includes(id.split(':')[0]!));
  return {
    ...base,
    port: 0,
    dataDir,
    databaseUrl: undefined,
    logLevel: 'warn',
    registryPath,
    rateLimits: undefined,
    strategies: base.strategies.filter((s) => onEvm(s.from) && onEvm(s.to)),
    solvers: base.solvers.map((s) => ({ ...s, addresses: Object.fromEntries(Object.entries(s.addresses).filter(([k]) => EVM_CHAINS.includes(k))) })),
  };
}
