// The migrations: each one's data changes, and all of them from an empty database on both stores,
// which every other store test skips (they start from a migrated template: test/helpers/stores.ts).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { migrate, openStore, type Db, type Store } from '../../src/store/database.ts';
import { readSignedTxs } from '../../src/store/signed-txs.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';

test("0016: a Solana job's last valid block height moves out of nonce; an EVM job keeps its nonce", async () => {
  const store = await openStore({ dataDir: 'memory://' });
  try {
    await migrate(store.db, '0015_engine_jobs');
    await sql`
      insert into chains (key, id, family, name, native_asset_id, icon, explorer_url, block_time_ms, confirmation_target,
        source_timelock, destination_timelock, is_active)
      values ('ethereum_localnet', 'evm:31337', 'evm', 'Ethereum', 'ethereum_localnet:eth', '', '', 1000, 1, 600, 300, true),
             ('solana_localnet', 'solana:localnet', 'solana', 'Solana', 'solana_localnet:sol', '', '', 400, 1, 600, 300, true)
    `.execute(store.db);
    const { rows } = await sql<{ id: string }>`
      insert into relayer_jobs (chain, action, idempotency_key, payload, status, raw_tx, tx_hash, nonce, tx_hashes, signed_at)
      values ('ethereum_localnet', 'redeem', 'evm', '{"kind":"redeem"}', 'submitted', '0x02aa', '0xbb', 7, '{0xbb}', now()),
             ('solana_localnet', 'redeem', 'sol', '{"kind":"redeem"}', 'submitted', 'AQ==', 'sig', 123456, '{sig}', now())
      returning id::text as id
    `.execute(store.db);
    await migrate(store.db);
    const signed = await readSignedTxs(store.db, rows.map((r) => r.id));
    const [evm, solana] = rows.map((r) => signed.get(r.id)!);
    assert.deepEqual([evm!.nonce, evm!.validUntilHeight], [7n, null]);
    assert.deepEqual([solana!.nonce, solana!.validUntilHeight], [null, 123456n]);
  } finally {
    await store.close();
  }
});

/**
 * What the migrations make, as the catalogs tell it: columns, constraints, indexes, functions,
 * triggers, sequences and views of the public schema, and the migrations recorded as applied.
 */
async function schemaOf(db: Db): Promise<string[]> {
  const { rows } = await sql<{ item: string }>`
    select 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as item
      from information_schema.columns where table_schema = 'public'
    union all select 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      from pg_constraint where connamespace = 'public'::regnamespace
    union all select 'index ' || indexdef from pg_indexes where schemaname = 'public'
    union all select 'function ' || pg_get_functiondef(oid) from pg_proc where pronamespace = 'public'::regnamespace and prokind in ('f', 'p')
    union all select 'trigger ' || pg_get_triggerdef(oid) from pg_trigger where not tgisinternal
    union all select 'sequence ' || sequence_name from information_schema.sequences where sequence_schema = 'public'
    union all select 'view ' || table_name || ' ' || view_definition from information_schema.views where table_schema = 'public'
    union all select 'migration ' || name from kysely_migration
    order by 1
  `.execute(db);
  return rows.map((r) => r.item);
}

/** Every file of src/store/migrations/, by name: what a database at head has applied. */
const MIGRATION_FILES = readdirSync(new URL('../../src/store/migrations/', import.meta.url))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -'.ts'.length))
  .sort();

describeEachStore('every migration', (kind) => {
  let empty: Store;
  let fromTemplate: Store;
  before(async () => {
    empty = await openTestStore(kind, { migrated: false });
    fromTemplate = await openTestStore(kind);
  });
  after(async () => {
    await empty?.close();
    await fromTemplate?.close();
  });

  test('runs from an empty database to the schema of the migrated template the other tests start from', async () => {
    const { rows: tables } = await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = 'public'`.execute(empty.db);
    assert.equal(tables[0]!.n, 0, 'the database starts empty');
    await migrate(empty.db);
    const { rows: applied } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(empty.db);
    assert.deepEqual(
      applied.map((r) => r.name),
      MIGRATION_FILES,
    );
    const migrated = await schemaOf(empty.db);
    assert.ok(migrated.filter((i) => i.startsWith('column ')).length > 100, `the migrations made the tables (${migrated.length} catalog items)`);
    assert.deepEqual(await schemaOf(fromTemplate.db), migrated);
  });

  test('a store from the template is at head: migrate, as the service runs it at start, changes nothing', async () => {
    const applied = async () =>
      (await sql<{ row: string }>`select name || ' ' || timestamp::text as row from kysely_migration order by name`.execute(fromTemplate.db)).rows.map((r) => r.row);
    const [schema, atStart] = [await schemaOf(fromTemplate.db), await applied()];
    assert.equal(atStart.length, MIGRATION_FILES.length);
    await migrate(fromTemplate.db);
    assert.deepEqual(await applied(), atStart);
    assert.deepEqual(await schemaOf(fromTemplate.db), schema);
  });
});
