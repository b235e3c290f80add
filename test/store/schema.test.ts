// The Kysely schema type is the database's: every table and column the migrations create, with its type,
// nullability and whether the database fills it in, and nothing more.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/store/database.ts';
import { SCHEMA, type Column } from '../../src/store/schema.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';

/** Kysely's own bookkeeping, not the service's tables. */
const MIGRATOR_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

const describe = (c: Column<unknown, unknown, unknown>) => `${c.type}${c.nullable ? ' null' : ''}${c.filled === 'no' ? '' : ` ${c.filled}`}`;

describeEachStore('the schema type', (kind) => {
  let store: Store;
  before(async () => {
    store = await openTestStore(kind);
  });
  after(() => store.close());

  test('names every table and column of the migrated database, as the database has it', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null; is_generated: string }>`
      select c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default, c.is_generated
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
    `.execute(store.db);
    const inDatabase = Object.fromEntries(
      rows
        .filter((r) => !MIGRATOR_TABLES.has(r.table_name))
        .map((r) => {
          const filled = r.is_generated === 'ALWAYS' ? 'generated' : r.column_default !== null ? 'default' : 'no';
          return [`${r.table_name}.${r.column_name}`, describe({ type: r.data_type, nullable: r.is_nullable === 'YES', filled })];
        }),
    );
    const inType = Object.fromEntries(
      Object.entries(SCHEMA).flatMap(([table, columns]) =>
        Object.entries(columns).map(([name, c]: [string, Column<unknown, unknown, unknown>]) => [`${table}.${name}`, describe(c)]),
      ),
    );
    const names = (o: Record<string, string>) => Object.keys(o).sort();
    assert.deepEqual(
      {
        'columns missing from SCHEMA': names(inDatabase).filter((c) => !(c in inType)),
        'SCHEMA columns the database lacks': names(inType).filter((c) => !(c in inDatabase)),
        'columns described otherwise': names(inType)
          .filter((c) => c in inDatabase && inType[c] !== inDatabase[c])
          .map((c) => `${c}: SCHEMA says ${inType[c]}, the database ${inDatabase[c]}`),
      },
      { 'columns missing from SCHEMA': [], 'SCHEMA columns the database lacks': [], 'columns described otherwise': [] },
    );
    assert.ok(Object.keys(inType).length > 200, 'the comparison saw the tables');
  });
});
