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
    // A block at a time until the subscription, set up meanwhile, reports one; from then on every block.
    for (const until = Date.now() + 30_000; heads.length === 0; ) {
      assert.ok(Date.now() < until, 'no head within 30 s');
      await node.rpc('evm_mine');
      await new Promise((r) => setTimeout(r, 50));
    }
    const first = heads[0]!;
    for (let i = 0; i < 2; i++) await node.rpc('evm_mine');
    const last = BigInt((await node.rpc('eth_blockNumber')) as string);
    const expected = Array.from({ length: Number(last - first) + 1 }, (_, i) => first + BigInt(i));
    assert.ok(expected.length >= 3);
    for (const until = Date.now() + 30_000; heads.length < expected.length && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(heads, expected);
    unsubscribe();
    await new Promise((r) => setTimeout(r, 100));
    await node.rpc('evm_mine');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(heads, expected, 'nothing after unsubscribing');
    assert.deepEqual(errors, []);
  } finally {
    unsubscribe();
    await node.stop();
  }
});
