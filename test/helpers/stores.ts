import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import pg from 'pg';
import { migrate, openStore, type Store, type StoreKind } from '../../src/store/database.ts';

export const STORE_KINDS: readonly StoreKind[] = ['pglite', 'postgres'];

/**
 * Opens a fresh, migrated store: an in-memory PGlite, or a new database on the PostgreSQL server at
 * DATABASE_URL that is dropped again on close.
 */
export async function openTestStore(kind: StoreKind): Promise<Store & { url?: string }> {
  if (kind === 'pglite') {
    const store = await openStore({ dataDir: 'memory://' });
    await migrate(store.db);
    return store;
  }
  const url = postgresUrl();
  if (!url) throw new Error('DATABASE_URL is not set: the PostgreSQL tests need a server');
  const name = `hashlock_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, `create database ${name}`);
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: testUrl.toString(), poolSize: 20 });
  await migrate(store.db);
  return {
    ...store,
    url: testUrl.toString(),
    close: async () => {
      await store.close();
      await adminQuery(url, `drop database if exists ${name} with (force)`);
    },
  };
}

function postgresUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Runs `suite` once per store kind. Without DATABASE_URL the PostgreSQL run fails in CI and is
 * skipped, loudly, elsewhere.
 */
export function describeEachStore(name: string, suite: (kind: StoreKind) => void): void {
  for (const kind of STORE_KINDS) {
    if (kind === 'postgres' && !postgresUrl() && !process.env.CI) {
      console.warn(`\n*** SKIPPING PostgreSQL tests of "${name}": DATABASE_URL is not set ***\n`);
      describe(`${name} [${kind}]`, { skip: 'DATABASE_URL is not set' }, () => {});
      continue;
    }
    describe(`${name} [${kind}]`, () => suite(kind));
  }
}
