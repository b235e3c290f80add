import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/store/database.ts';

test('PGlite in a new data dir: its initdb runs in a child process, so its second PGlite instance (~500 MB of WASM memory) is never garbage here; the next start resumes the database', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-pglite-'));
  try {
    const external = process.memoryUsage().external;
    const store = await openStore({ dataDir });
    try {
      assert.ok(existsSync(join(dataDir, 'pglite', 'PG_VERSION')));
      // The store's own instance is 128 MB of WASM memory; initdb's in this process left about 500 MB more.
      const grown = (process.memoryUsage().external - external) / 2 ** 20;
      assert.ok(grown < 300, `external memory grew ${grown.toFixed(0)} MB`);
      await sql`create table kept (n int)`.execute(store.db);
      await sql`insert into kept values (7)`.execute(store.db);
    } finally {
      await store.close();
    }
    const again = await openStore({ dataDir });
    try {
      const { rows } = await sql<{ n: number }>`select n from kept`.execute(again.db);
      assert.deepEqual(rows, [{ n: 7 }]);
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
