import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import { isFetchFailure } from '../errors.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_orders.ts';
import * as m0003 from './migrations/0003_chain_heights.ts';
import * as m0004 from './migrations/0004_create_order_function.ts';
import * as m0005 from './migrations/0005_evm_watcher.ts';
import * as m0006 from './migrations/0006_relayer_transactions.ts';
import * as m0007 from './migrations/0007_solver.ts';
import * as m0008 from './migrations/0008_bitcoin_utxos.ts';
import * as m0009 from './migrations/0009_job_signers.ts';
import * as m0010 from './migrations/0010_signed_jobs.ts';
import * as m0011 from './migrations/0011_instant_refund_consent.ts';
import * as m0012 from './migrations/0012_order_events.ts';
import * as m0013 from './migrations/0013_webhooks.ts';
import * as m0014 from './migrations/0014_webhook_log_retention.ts';
import * as m0015 from './migrations/0015_engine_jobs.ts';
import * as m0016 from './migrations/0016_signed_tx_lifetime.ts';
import * as m0017 from './migrations/0017_initiate_tx_hashes.ts';
import * as m0018 from './migrations/0018_app_rate_limits.ts';
import * as m0019 from './migrations/0019_record_watcher_poll.ts';
import * as m0020 from './migrations/0020_registered_solvers.ts';
import * as m0021 from './migrations/0021_solver_standing.ts';
import * as m0022 from './migrations/0022_solver_quotes.ts';
import * as m0023 from './migrations/0023_worker_signed_requests.ts';
import * as m0024 from './migrations/0024_failed_actions.ts';
import * as m0025 from './migrations/0025_aggregator.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PreparingClient } from './prepared.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type StoreKind = 'pglite' | 'postgres';

/** What a LISTEN subscriber hears: messages, and whether it is connected (it may miss messages when not). */
export interface ListenHandlers {
  message(payload: string): void;
  connected(isConnected: boolean): void;
}

export interface Store {
  db: Db;
  kind: StoreKind;
  /** Subscribes to a notification channel; returns the unsubscribe function. */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_orders': m0002,
  '0003_chain_heights': m0003,
  '0004_create_order_function': m0004,
  '0005_evm_watcher': m0005,
  '0006_relayer_transactions': m0006,
  '0007_solver': m0007,
  '0008_bitcoin_utxos': m0008,
  '0009_job_signers': m0009,
  '0010_signed_jobs': m0010,
  '0011_instant_refund_consent': m0011,
  '0012_order_events': m0012,
  '0013_webhooks': m0013,
  '0014_webhook_log_retention': m0014,
  '0015_engine_jobs': m0015,
  '0016_signed_tx_lifetime': m0016,
  '0017_initiate_tx_hashes': m0017,
  '0018_app_rate_limits': m0018,
  '0019_record_watcher_poll': m0019,
  '0020_registered_solvers': m0020,
  '0021_solver_standing': m0021,
  '0022_solver_quotes': m0022,
  '0023_worker_signed_requests': m0023,
  '0024_failed_actions': m0024,
  '0025_aggregator': m0025,
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
  /**
   * A PGlite data directory to start from, as PGlite's `dumpDataDir()` wrote it: only with a
   * `memory://` dataDir, which then skips initdb. The tests open their stores from one migrated copy.
   */
  loadDataDir?: Blob;
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
      Client: PreparingClient,
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      options: '-c TimeZone=UTC',
      // A server that does not answer (a failover in progress, a dropped route) fails a connection
      // attempt, or the wait for a free one, after 5 s rather than never; TCP keepalive finds a
      // connection whose server went away without closing it.
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          textParsers.has(oid) ? keepText : (pg.types.getTypeParser(oid, format as 'text') as unknown)) as typeof pg.types.getTypeParser,
      },
    });
    // A connection the server drops (restart, failover, pg_terminate_backend) emits 'error' on its
    // client, and an 'error' without a listener crashes the process. The pool listens only while a
    // client is idle; a client checked out (a transaction, a held connection) between two statements
    // has no listener of its own. So every client gets one for its whole life: the loss then reaches
    // its holder as the failure of its next statement, and the pool discards the client on release
    // (it is no longer queryable). The next statement reconnects.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const url = options.databaseUrl;
    return {
      db,
      kind: 'postgres',
      listen: (channel, handlers) => listenPostgres(url, channel, handlers),
      close: () => db.destroy(),
    };
  }
  const dataDir = options.dataDir ?? 'memory://';
  if (options.loadDataDir && !dataDir.startsWith('memory://')) throw new Error('loadDataDir is only for a memory:// PGlite');
  let location = dataDir;
  if (!dataDir.startsWith('memory://')) {
    location = join(dataDir, 'pglite');
    mkdirSync(location, { recursive: true });
    if (!existsSync(join(location, 'PG_VERSION'))) await initPGlite(location);
  }
  const pglite = await PGlite.create(location, {
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers: Object.fromEntries(Object.values(TEXT_TYPES).map((oid) => [oid, keepText])),
    // PGlite's files live in its WASM memory already: PostgreSQL's default 128 MB page cache on top
    // of them only holds second copies.
    startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'],
  });
  await pglite.exec("set time zone 'UTC'");
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    listen: async (channel, handlers) => {
      const unsubscribe = await pglite.listen(checkChannel(channel), (payload) => handlers.message(payload));
      handlers.connected(true);
      return async () => {
        handlers.connected(false);
        if (!pglite.closed) await unsubscribe();
      };
    },
    // Kysely closes the driver (and so PGlite) only once a query has gone through it: a store
    // closed before any would keep PGlite, and the process, running.
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

const INIT_PGLITE = `const { PGlite } = await import(process.argv[1]); await (await PGlite.create(process.argv[2])).close();`;

/**
 * Creates a new PGlite database in `location` in a child process. In this one, PGlite would run its
 * initdb in a second PGlite instance whose WASM memory (about 500 MB once initdb is done) stays
 * resident until the next major GC, seconds after the service has started. If the child fails, the
 * caller's PGlite.create runs initdb itself and reports what is wrong.
 */
async function initPGlite(location: string): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', INIT_PGLITE, import.meta.resolve('@electric-sql/pglite'), location]);
  } catch {
    // PGlite.create below says why.
  }
}

function checkChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  return channel;
}

/**
 * LISTEN on a dedicated connection, reconnecting with backoff when it drops (the handlers hear
 * `connected(false)` meanwhile): at most 2 s apart, so changes are heard again soon after the
 * database returns. Resolves after the first attempt, connected or not.
 */
async function listenPostgres(url: string, channel: string, handlers: ListenHandlers): Promise<() => Promise<void>> {
  checkChannel(channel);
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = 250;
  let timer: NodeJS.Timeout | undefined;
  const retry = () => {
    if (!closed) timer = setTimeout(() => void connect(), retryMs);
  };
  // One chain of attempts: a connection lost while it is set up is retried by the attempt itself, one
  // lost later by its 'end' (both at once made two listeners per loss, and a stop closed only one).
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined); // 'end' follows and handles it
    let ended = false;
    let established = false;
    c.once('end', () => {
      ended = true;
      if (!established) return;
      client = undefined;
      handlers.connected(false);
      retry();
    });
    try {
      await c.connect();
      c.on('notification', (n) => {
        if (n.channel === channel && n.payload) handlers.message(n.payload);
      });
      await c.query(`listen ${channel}`);
      if (closed) return void (await c.end());
      if (!ended) {
        established = true;
        client = c;
        retryMs = 250;
        handlers.connected(true);
        return;
      }
    } catch {
      // retried below
    }
    handlers.connected(false);
    await c.end().catch(() => undefined);
    retryMs = Math.min(retryMs * 2, 2_000);
    retry();
  };
  await connect();
  return async () => {
    closed = true;
    clearTimeout(timer);
    handlers.connected(false);
    await client?.end().catch(() => undefined);
  };
}

/** Applies every migration not yet applied (up to `target` when one is named); throws on the first failure. */
export async function migrate(db: Db, target?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
  });
  const { error, results } = target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** Where the database's schema stands against this version's migrations. */
export interface MigrationStatus {
  applied: string[];
  /** This version's migrations the database lacks. */
  pending: string[];
  /** Migrations the database has that this version does not know: a newer version migrated it. */
  unknown: string[];
}

export async function migrationStatus(db: Db): Promise<MigrationStatus> {
  const known = Object.keys(MIGRATIONS);
  const { rows } = await sql<{ exists: boolean }>`select to_regclass('kysely_migration') is not null as exists`.execute(db);
  const applied = rows[0]?.exists ? (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name) : [];
  return {
    applied,
    pending: known.filter((name) => !applied.includes(name)),
    unknown: applied.filter((name) => !known.includes(name)),
  };
}

/**
 * A bigserial id (an event's, a delivery's) as a client sends it back: digits, at most 18 of them,
 * so it always fits in a bigint and the database never sees an out-of-range value.
 */
export const SERIAL_ID = /^[0-9]{1,18}$/;

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

/** SQLSTATEs of a server that dropped or refuses the session: class 08 and the shutdown codes (57P01 is pg_terminate_backend). */
const LOST_STATES = /^(08...|57P0[1-3]|53300)$/;
const LOST_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What pg says of a connection that ended or never came (it gives these no code). */
const LOST_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect)/;

/**
 * Whether an error is the database being out of reach (its connection lost, refused or timed out),
 * rather than a statement's own failure: work that meets it is retried on a new connection by
 * whoever owns it, and an API request answers 503. A chain node's refused connection carries the same
 * codes, under a failed fetch: that is the node's, not the database's.
 */
export function isConnectionLoss(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 5 || isFetchFailure(err)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (LOST_STATES.test(code) || LOST_NODE_CODES.has(code))) return true;
  if (LOST_MESSAGES.test(err.message)) return true;
  if (err instanceof AggregateError && err.errors.some((e) => isConnectionLoss(e, depth + 1))) return true;
  return isConnectionLoss(err.cause, depth + 1);
}

/**
 * Runs `work`, and again (on a new connection) while it fails because the database is out of reach,
 * backing off from 100 ms to 2 s, until `deadline` (epoch ms) or `signal`: then with its last error.
 * For work whose outcome must not be lost with a connection, and which is safe to repeat.
 */
export async function retryWhileUnreachable<T>(work: () => Promise<T>, options: { deadline: number; signal?: AbortSignal }): Promise<T> {
  for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2_000)) {
    try {
      return await work();
    } catch (err) {
      const left = options.deadline - Date.now();
      if (!isConnectionLoss(err) || options.signal?.aborted || left <= 0) throw err;
      await new Promise((r) => setTimeout(r, Math.min(delayMs, left)));
    }
  }
}

/** One round trip to the database (the health check), failing after `timeoutMs` without an answer. */
export async function ping(db: Db, timeoutMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([sql`select 1`.execute(db), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
