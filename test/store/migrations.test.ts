import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { migrate, openStore } from '../../src/store/database.ts';
import { readSignedTxs } from '../../src/store/signed-txs.ts';

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
