import assert from 'node:assert/strict';
import { test } from 'node:test';
import { subscribeNewHeads } from '../../../src/chains/evm/new-heads.ts';
import { startAnvil } from '../../../src/localnet/evm/anvil.ts';

test('new heads arrive over the WebSocket subscription as blocks are mined, and stop after unsubscribing', async () => {
  const node = await startAnvil({ chainId: 31337 });
  const heads: bigint[] = [];
  const errors: Error[] = [];
  const unsubscribe = subscribeNewHeads(node.rpcUrl.replace(/^http/, 'ws'), (n) => heads.push(n), (e) => errors.push(e));
  try {
    await new Promise((r) => setTimeout(r, 300)); // the subscription is set up
    for (let i = 0; i < 3; i++) await node.rpc('evm_mine');
    for (const until = Date.now() + 5_000; heads.length < 3 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(heads, [1n, 2n, 3n]);
    unsubscribe();
    await new Promise((r) => setTimeout(r, 100));
    await node.rpc('evm_mine');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(heads, [1n, 2n, 3n], 'nothing after unsubscribing');
    assert.deepEqual(errors, []);
  } finally {
    unsubscribe();
    await node.stop();
  }
});
