import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
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
  const { url: testUrl, drop } = await createDatabase(url, 'hashlock_test');
  const store = await openStore({ databaseUrl: testUrl, poolSize: 20 });
  await migrate(store.db);
  return {
    ...store,
    url: testUrl,
    close: async () => {
      await store.close();
      await drop();
    },
  };
}

/** Creates a database with a random name on the server at `serverUrl`; `drop` removes it. */
export async function createDatabase(serverUrl: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // Not WITH (FORCE): a closed pool's connections may still be saying goodbye, and killing them
    // surfaces as an error in this process. Retry until they are gone.
    drop: async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await adminQuery(serverUrl, `drop database if exists ${name}`);
        } catch (err) {
          if (attempt >= 100 || (err as { code?: string }).code !== '55006') throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
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

/** Counts the statements a Kysely instance runs (`db.withPlugin(counter)`; BEGIN and COMMIT are not statements here). */
export class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs) {
    this.count++;
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
