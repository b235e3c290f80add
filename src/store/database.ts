import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, type Migration } from 'kysely';
import pg from 'pg';
import * as m0001 from './migrations/0001_initial.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type StoreKind = 'pglite' | 'postgres';

export interface Store {
  db: Db;
  kind: StoreKind;
  close(): Promise<void>;
}

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
};

const TEXT_TYPES = {
  INT8: 20,
  NUMERIC: 1700,
  TIMESTAMP: 1114,
  TIMESTAMPTZ: 1184,
};
const keepText = (value: string): string => value;

export interface OpenOptions {
  /** A PostgreSQL URL; when absent the embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** Directory for PGlite's files; `memory://` keeps them in memory. */
  dataDir?: string;
  /** Connections in the PostgreSQL pool. */
  poolSize?: number;
}

/**
 * Opens PGlite (embedded, the default) or PostgreSQL (`databaseUrl`) with the same settings:
 * UTC session time zone, and int8/numeric/timestamp values read back as text so that no amount or
 * block number passes through a JS number and timestamps keep their microseconds.
 */
export async function openStore(options: OpenOptions): Promise<Store> {
  if (options.databaseUrl) {
    const textParsers = new Set(Object.values(TEXT_TYPES));
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      options: '-c TimeZone=UTC',
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          textParsers.has(oid) ? keepText : (pg.types.getTypeParser(oid, format as 'text') as unknown)) as typeof pg.types.getTypeParser,
      },
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const dataDir = options.dataDir ?? 'memory://';
  let location = dataDir;
  if (!dataDir.startsWith('memory://')) {
    location = join(dataDir, 'pglite');
    mkdirSync(location, { recursive: true });
  }
  const pglite = await PGlite.create(location, {
    parsers: Object.fromEntries(Object.values(TEXT_TYPES).map((oid) => [oid, keepText])),
  });
  await pglite.exec("set time zone 'UTC'");
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, kind: 'pglite', close: () => db.destroy() };
}

/** Applies every migration not yet applied; throws on the first failure. */
export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** `2026-01-02 03:04:05.12+00` -> `2026-01-02T03:04:05.120000Z` (microseconds, as created_at shows). */
export function toRfc3339Micro(pgText: string): string {
  const [date, rest = ''] = pgText.split(' ');
  const time = rest.replace(/[+-]00(:00)?$/, '');
  const [hms, frac = ''] = time.split('.');
  return `${date}T${hms}.${frac.padEnd(6, '0').slice(0, 6)}Z`;
}

/** `2026-01-02 03:04:05.12+00` -> `2026-01-02T03:04:05Z` (seconds, as the *_timestamp fields show). */
export function toRfc3339Seconds(pgText: string): string {
  const [date, rest = ''] = pgText.split(' ');
  const hms = rest.replace(/[+-]00(:00)?$/, '').split('.')[0];
  return `${date}T${hms}Z`;
}
