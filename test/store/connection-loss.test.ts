// A PostgreSQL connection terminated by the server while the service holds it: the work on it fails
// like any failed query, nothing else happens to the process, and the next work gets a new connection.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { createPublicClient, http } from 'viem';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../../src/errors.ts';
import { toHttpError } from '../../src/api/errors.ts';
import { isConnectionLoss, type Store } from '../../src/store/database.ts';
import { openTestStore } from '../helpers/stores.ts';

const skip = process.env.DATABASE_URL ? false : process.env.CI ? false : 'DATABASE_URL is not set';
if (skip) console.warn(`\n*** SKIPPING the connection-loss tests: ${skip} ***\n`);

describe('losing a PostgreSQL connection', { skip }, () => {
  let store: Store & { url?: string };
  let admin: pg.Client;

  before(async () => {
    store = await openTestStore('postgres');
    admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await store.close();
  });

  const terminate = async (pid: number) => {
    await admin.query('select pg_terminate_backend($1)', [pid]);
    // The end of the connection reaches the client while it sits checked out between two statements.
    await new Promise((r) => setTimeout(r, 200));
  };

  /** Work on one connection (`executor.execute`) that loses it between two statements: what it fails with. */
  const loseMidWork = (executor: { execute<T>(work: (db: Store['db']) => Promise<T>): Promise<T> }): Promise<unknown> =>
    executor
      .execute(async (db) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
        await terminate(rows[0]!.pid);
        await sql`select 1`.execute(db);
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );

  test('inside a transaction, between two statements: the transaction fails, the process carries on', async () => {
    const failed = await loseMidWork(store.db.transaction());
    assert.ok(failed, 'the transaction failed');
    assert.ok(isConnectionLoss(failed), `a connection loss: ${(failed as Error | undefined)?.message}`);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db);
    assert.equal(rows[0]!.one, 1, 'the next statement runs on a new connection');
  });

  test('a connection held across statements outside a transaction: the same', async () => {
    const failed = await loseMidWork(store.db.connection());
    assert.ok(isConnectionLoss(failed), `a connection loss: ${(failed as Error | undefined)?.message}`);
    assert.equal((await sql<{ one: number }>`select 1 as one`.execute(store.db)).rows[0]!.one, 1);
  });

  test('every idle connection of the pool terminated: the next statements reconnect', async () => {
    await Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(0.01)`.execute(store.db)));
    const name = new URL(store.url!).pathname.slice(1);
    const { rows } = await admin.query<{ n: number }>(
      'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1) t',
      [name],
    );
    assert.ok(rows[0]!.n > 0, 'connections were terminated');
    await new Promise((r) => setTimeout(r, 200));
    const results = await Promise.all(Array.from({ length: 5 }, () => sql<{ one: number }>`select 1 as one`.execute(store.db)));
    assert.ok(results.every((r) => r.rows[0]!.one === 1));
  });

  test('an API request that meets a lost connection is a 503 naming the database, not a 500', async () => {
    const lost = await loseMidWork(store.db.connection());
    const answer = toHttpError(lost);
    assert.equal(answer.status, 503);
    assert.equal(answer.code, 'unavailable');
    assert.match(answer.message, /database/);
    // What is not a lost connection stays what it was.
    assert.equal(toHttpError(new Error('boom')).status, 500);
    assert.equal(toHttpError(new AppError('conflict', 'no')).status, 409);
    const refused = await new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' }).connect().catch((err: unknown) => err);
    assert.ok(isConnectionLoss(refused), 'a refused connection is the database being unavailable');
    assert.equal(isConnectionLoss(Object.assign(new Error('duplicate key'), { code: '23505' })), false);
  });
});

test("a chain node's refused connection is not the database's: a request that meets it is a 503 naming the chain", async () => {
  const nodeDown = await fetch('http://127.0.0.1:1/').catch((err: unknown) => err);
  const viaViem = await createPublicClient({ transport: http('http://127.0.0.1:1/', { retryCount: 0 }) }).getBlockNumber().catch((err: unknown) => err);
  for (const err of [nodeDown, viaViem]) {
    assert.equal(isConnectionLoss(err), false, `not the database: ${(err as Error).message}`);
    assert.deepEqual(toHttpError(err), { status: 503, code: 'chain_unavailable', message: "a chain's node is out of reach; retry shortly" });
  }
});
