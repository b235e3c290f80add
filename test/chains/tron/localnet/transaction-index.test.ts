// The local Tron chain saves its transaction index after every block; it writes the file only when a
// transaction came since, so an idle chain does not serialize its whole history every 3 s.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { TransactionIndex, type IndexedTransaction } from '../../../../src/localnet/tron/transaction-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'hashlock-tron-index-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const entry = (n: number): IndexedTransaction => ({ tx: { txID: n.toString(16).padStart(64, 'A') } as IndexedTransaction['tx'], evmHash: `0x${n.toString(16).padStart(64, '0')}`, gasLimit: '21000' });

test('the index is written when a transaction came since the last write, and read back on a restart', () => {
  const file = join(dir, 'tron-index.json');
  const index = new TransactionIndex(file);
  index.save();
  assert.equal(existsSync(file), false, 'nothing to write yet');
  index.add(entry(1));
  index.save();
  assert.equal(existsSync(file), true);
  rmSync(file);
  index.save();
  assert.equal(existsSync(file), false, 'unchanged since the last write');
  index.add(entry(2));
  index.save();
  const restarted = new TransactionIndex(file);
  assert.deepEqual([restarted.has(entry(1).tx.txID), restarted.byEvm(entry(2).evmHash)?.tx.txID], [true, entry(2).tx.txID]);
  rmSync(file);
  restarted.save();
  assert.equal(existsSync(file), false, 'what was read is not written again');
});
