// Statements marked `prepared` (src/store/prepared.ts): named statements on PostgreSQL, parsed once per
// connection; plain statements elsewhere and on PGlite.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/store/database.ts';
import { findOrder, findOrders, insertOrder } from '../../src/store/orders.ts';
import { prepared } from '../../src/store/prepared.ts';
import { sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';

describeEachStore('prepared statements', (kind) => {
  let store: Store;
  let appId: string;
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
  });
  after(() => store.close());

  test('a marked statement answers as the same statement unmarked, run after run with other inputs', async () => {
    const orders = [sampleOrder(appId), sampleOrder(appId), sampleOrder(appId)];
    for (const order of orders) await insertOrder(store.db, order);
    for (const order of orders) assert.equal((await findOrder(store.db, order.id))?.id, order.id);
    const two = await findOrders(store.db, [orders[2]!.id, 'no-such-order', orders[0]!.id]);
    assert.deepEqual(two.map((o) => o.id).sort(), [orders[0]!.id, orders[2]!.id].sort());
    for (const n of [1, 2, 3]) {
      const { rows } = await sql<{ n: number }>`${prepared} select ${n}::int * 2 as n`.execute(store.db);
      assert.equal(rows[0]!.n, n * 2);
    }
  });
});

describe('prepared statements on PostgreSQL', () => {
  let store: Store;
  before(async () => {
    store = await openTestStore('postgres');
  });
  after(() => store.close());

  const preparedOnConnection = (run: (db: Store['db']) => Promise<void>) =>
    store.db.connection().execute(async (conn) => {
      await run(conn);
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(conn);
      return rows;
    });

  test('a marked statement is a named statement of its connection, once however often it runs; a plain one is not', async () => {
    const statements = await preparedOnConnection(async (db) => {
      for (let i = 0; i < 3; i++) await sql`${prepared} select ${i}::int as marked`.execute(db);
      await sql`select ${1}::int as plain`.execute(db);
    });
    const marked = statements.filter((s) => s.statement.includes('as marked'));
    assert.equal(marked.length, 1);
    assert.match(marked[0]!.name, /^p_[0-9a-f]{24}$/);
    assert.equal(statements.filter((s) => s.statement.includes('as plain')).length, 0);
  });

  test('a connection names at most 64 texts: past them a marked statement still runs, unnamed', async () => {
    const results: number[] = [];
    const statements = await preparedOnConnection(async (db) => {
      for (let i = 0; i < 80; i++) {
        const { rows } = await sql<{ n: number }>`${prepared} select ${sql.raw(String(i))} + ${1}::int as n`.execute(db);
        results.push(rows[0]!.n);
      }
    });
    assert.deepEqual(results, Array.from({ length: 80 }, (_, i) => i + 1));
    assert.equal(statements.filter((s) => s.name.startsWith('p_')).length, 64);
  });
});
