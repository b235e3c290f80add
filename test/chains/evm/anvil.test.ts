import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startAnvil } from '../../../src/localnet/evm/anvil.ts';
import { waitFor } from '../../helpers/wait.ts';

test('anvil with a state file and an interval: killed outright (kill -9), it comes back with the chain it had saved, not an empty or much older one', async () => {
  const stateFile = join(mkdtempSync(join(tmpdir(), 'hashlock-anvil-')), 'anvil.json');
  const first = await startAnvil({ chainId: 31337, stateFile, stateIntervalSec: 1 });
  let mined: number;
  try {
    await first.rpc('anvil_mine', ['0x14']); // 20 blocks
    mined = Number(await first.rpc('eth_blockNumber'));
    assert.equal(mined, 20);
    // Within a few intervals the state on disk holds the 20 blocks.
    const savedHeight = () => {
      try {
        return (JSON.parse(readFileSync(stateFile, 'utf8')) as { best_block_number?: number }).best_block_number;
      } catch {
        return undefined; // not written yet, or being written
      }
    };
    await waitFor(() => savedHeight() === 20, 10_000, 'the state saved while the node ran');
  } finally {
    process.kill(first.pid, 'SIGKILL');
    await first.stop(); // returns once the killed process is gone
  }

  const second = await startAnvil({ chainId: 31337, stateFile, stateIntervalSec: 1 });
  try {
    assert.equal(Number(await second.rpc('eth_blockNumber')), mined, 'the chain resumed at the saved height');
  } finally {
    await second.stop();
  }
});
