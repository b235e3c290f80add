import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type UnknownRow } from 'kysely';
import pg from 'pg';
import { migrate, openStore, type Store, type StoreKind } from '../../src/store/database.ts';
import { PGliteDialect } from '../../src/store/pglite-dialect.ts';
import type { Database } from '../../src/store/schema.ts';

export const STORE_KINDS: readonly StoreKind[] = ['pglite', 'postgres'];

/**
 * Opens a fresh store: an in-memory PGlite, or a new database on the PostgreSQL server at
 * DATABASE_URL that is dropped again on close. It is migrated to head, copied from a template
 * migrated once (see `migrationsHash`), unless `migrated: false`: then it is empty, for the test
 * that runs every migration.
 */
export async function openTestStore(kind: StoreKind, options: { migrated?: boolean } = {}): Promise<Store & { url?: string }> {
  const migrated = options.migrated ?? true;
  if (kind === 'pglite') {
    return openStore(migrated ? { dataDir: 'memory://', loadDataDir: await pgliteTemplate() } : { dataDir: 'memory://' });
  }
  const url = postgresUrl();
  if (!url) throw new Error('DATABASE_URL is not set: the PostgreSQL tests need a server');
  const { url: testUrl, drop } = await createDatabase(url, 'hashlock_test', { migrated });
  const store = await openStore({ databaseUrl: testUrl, poolSize: 20 });
  return {
    ...store,
    url: testUrl,
    close: async () => {
      await store.close();
      await drop();
    },
  };
}

/**
 * Creates a database with a random name on the server at `serverUrl`; `drop` removes it. It is a copy
 * of the server's template, migrated to head (a service's migrate at start then has nothing to do),
 * unless `migrated: false`: then it is empty.
 */
export async function createDatabase(serverUrl: string, prefix: string, options: { migrated?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  if (options.migrated ?? true) await createFromTemplate(serverUrl, name);
  else await adminQuery(serverUrl, `create database ${name}`);
  return {
    url: databaseUrl(serverUrl, name),
    // Not WITH (FORCE): a closed pool's connections may still be saying goodbye, and killing them
    // surfaces as an error in this process. Retry until they are gone.
    drop: () => whileInUse(() => adminQuery(serverUrl, `drop database if exists ${name}`)),
  };
}

function postgresUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function adminQuery(url: string, text: string): Promise<void> {
  await withClient(url, (client) => client.query(text));
}

/** Runs `work` again while it fails because other sessions still use the database (55006), for up to 5 s. */
async function whileInUse<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= 100 || (err as { code?: string }).code !== '55006') throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

// --- Migrated templates ---------------------------------------------------------------------------
//
// A store starts as a copy of a database migrated to head once, not migrated again (22 migrations,
// and on PGlite an initdb, seconds each on a busy machine). The template's name carries
// `migrationsHash`, so a changed migration makes a new one; templates of another hash built more
// than STALE_MS ago are removed by whoever builds a new one. test/store/migrations.test.ts runs every
// migration from empty on both stores and checks that the result is the template's.

const STORE_DIR = fileURLToPath(new URL('../../src/store/', import.meta.url));
/** Bumped when the way a template is built changes, so that no template of the old way is used. */
const TEMPLATE_BUILD = 1;
const STALE_MS = 60 * 60_000;

let hash: string | undefined;

/**
 * What a migrated database depends on: the migration list in src/store/database.ts, every file in
 * src/store/migrations/ (names and contents) and the SQL script runner they use. 16 hex digits.
 */
export function migrationsHash(): string {
  if (hash) return hash;
  const h = createHash('sha256').update(`build ${TEMPLATE_BUILD}\n`);
  const list = readFileSync(join(STORE_DIR, 'database.ts'), 'utf8').match(/^ {2}'\d{4}_\w+': m\d{4},$/gm);
  if (!list?.length) throw new Error('no migration list found in src/store/database.ts');
  h.update(list.join('\n'));
  const dir = join(STORE_DIR, 'migrations');
  for (const file of readdirSync(dir).sort()) h.update(`\0${file}\0`).update(readFileSync(join(dir, file)));
  h.update('\0sql-script.ts\0').update(readFileSync(join(STORE_DIR, 'sql-script.ts')));
  return (hash = h.digest('hex').slice(0, 16));
}

// PostgreSQL: a database `hashlock_template_<hash>` on the server, which every test process copies
// with CREATE DATABASE ... TEMPLATE. It is built under another name, then renamed, by one process at
// a time (an advisory lock), and takes no connections (CREATE DATABASE refuses a template in use).

const TEMPLATE_PREFIX = 'hashlock_template_';
const BUILD_PREFIX = 'hashlock_template_build_';
const TEMPLATE_LOCK = 'hashlock test templates';
const BUILT_AT = 'hashlock test template, built at ';

/** The template's name on each server, once this process knows it is there. */
const templates = new Map<string, Promise<string>>();

async function createFromTemplate(serverUrl: string, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let template = templates.get(serverUrl);
    if (!template) {
      template = ensurePostgresTemplate(serverUrl);
      templates.set(serverUrl, template);
    }
    try {
      return await adminQuery(serverUrl, `create database ${name} template ${await template}`);
    } catch (err) {
      templates.delete(serverUrl);
      // 3D000: the template is gone (removed as stale by a process of another hash): build it again.
      if (attempt >= 2 || (err as { code?: string }).code !== '3D000') throw err;
    }
  }
}

async function ensurePostgresTemplate(serverUrl: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${migrationsHash()}`;
  const exists = async (client: pg.Client) => (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  return withClient(serverUrl, async (admin) => {
    if (await exists(admin)) return name;
    await admin.query('select pg_advisory_lock(hashtext($1))', [TEMPLATE_LOCK]);
    try {
      if (await exists(admin)) return name;
      await dropStaleTemplates(admin);
      const building = `${BUILD_PREFIX}${migrationsHash()}_${randomBytes(4).toString('hex')}`;
      await admin.query(`create database ${building}`);
      try {
        const store = await openStore({ databaseUrl: databaseUrl(serverUrl, building), poolSize: 1 });
        try {
          await migrate(store.db);
        } finally {
          await store.close();
        }
        await admin.query(`comment on database ${building} is '${BUILT_AT}${new Date().toISOString()}'`);
        await admin.query(`alter database ${building} with allow_connections false is_template true`);
        await whileInUse(() => admin.query(`alter database ${building} rename to ${name}`));
      } catch (err) {
        await dropTemplate(admin, building, true).catch(() => undefined);
        throw err;
      }
      return name;
    } finally {
      await admin.query('select pg_advisory_unlock(hashtext($1))', [TEMPLATE_LOCK]);
    }
  });
}

/**
 * Under the lock: unfinished builds (their process died; no build runs meanwhile) and templates of
 * another hash built more than STALE_MS ago. DROP DATABASE waits for a copy in progress; a copy
 * asked for afterwards fails with 3D000 and builds the template again.
 */
async function dropStaleTemplates(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string; note: string | null }>(
    `select datname, shobj_description(oid, 'pg_database') as note from pg_database where starts_with(datname, $1)`,
    [TEMPLATE_PREFIX],
  );
  for (const { datname, note } of rows) {
    if (datname.startsWith(BUILD_PREFIX)) {
      await dropTemplate(admin, datname, true);
      continue;
    }
    const builtAt = note?.startsWith(BUILT_AT) ? Date.parse(note.slice(BUILT_AT.length)) : NaN;
    if (datname !== `${TEMPLATE_PREFIX}${migrationsHash()}` && !(Date.now() - builtAt < STALE_MS)) await dropTemplate(admin, datname, false);
  }
}

async function dropTemplate(admin: pg.Client, name: string, force: boolean): Promise<void> {
  await admin.query(`alter database ${name} with is_template false`);
  await admin.query(`drop database if exists ${name}${force ? ' with (force)' : ''}`);
}

// PGlite: the data directory of a migrated in-memory PGlite (`dumpDataDir`, an uncompressed tar that
// loads faster than a gzipped one), kept in a file of the machine's temporary directory named after
// `migrationsHash` and PGlite's version. One process builds it (a lock file with its pid) and
// renames it into place; the others wait for it. Each process reads it once.

const PGLITE_DIR = join(tmpdir(), 'hashlock-test-stores');
const LOCK_ABANDONED_MS = 10 * 60_000;

let pgliteTar: Promise<Blob> | undefined;

function pgliteTemplate(): Promise<Blob> {
  pgliteTar ??= pgliteTemplateFile().then(
    (bytes) => new Blob([bytes]),
    (err: unknown) => {
      pgliteTar = undefined;
      throw err;
    },
  );
  return pgliteTar;
}

function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const pkg = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

async function pgliteTemplateFile(): Promise<Buffer> {
  mkdirSync(PGLITE_DIR, { recursive: true });
  const path = join(PGLITE_DIR, `pglite-${pgliteVersion()}-${migrationsHash()}.tar`);
  const lock = `${path}.lock`;
  for (;;) {
    try {
      return await readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (lockAbandoned(lock)) rmSync(lock, { force: true });
      else await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      const tar = await buildPGliteTemplate();
      const part = `${path}.${process.pid}.part`;
      writeFileSync(part, tar);
      renameSync(part, path);
      removeStaleFiles(path);
      return tar;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/** Whether the lock's process is gone, or it has held the lock far longer than a build takes. */
function lockAbandoned(lock: string): boolean {
  try {
    const age = Date.now() - statSync(lock).mtimeMs;
    if (age > LOCK_ABANDONED_MS) return true;
    const pid = Number(readFileSync(lock, 'utf8'));
    if (!pid) return age > 10_000; // its process has not written its pid yet
    process.kill(pid, 0);
    return false;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ESRCH' || code === 'ENOENT';
  }
}

async function buildPGliteTemplate(): Promise<Buffer> {
  const pglite = await PGlite.create('memory://');
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  try {
    await pglite.exec("set time zone 'UTC'");
    await migrate(db);
    // Everything in the data files, so that a copy starts with no WAL to replay.
    await pglite.exec('checkpoint');
    return Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
  } finally {
    await db.destroy();
  }
}

/** Other templates' files, and files left by a build that died, untouched for STALE_MS. */
function removeStaleFiles(current: string): void {
  for (const file of readdirSync(PGLITE_DIR)) {
    const path = join(PGLITE_DIR, file);
    if (path === current) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
    } catch {
      // removed meanwhile
    }
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
