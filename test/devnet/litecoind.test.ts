import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BitcoinRpcError, FALLBACK_FEE_SAT_PER_VB } from '../../src/chains/bitcoin/rpc.ts';
import { litecoinNodeOrSkip } from '../helpers/litecoin.ts';

test('litecoind regtest starts with CSV and taproot active, mines, answers RPC errors with their codes', async (t) => {
  const node = await litecoinNodeOrSkip(t);
  if (!node) return;
  try {
    const info = await node.rpc.call<{ chain: string; softforks: Record<string, { active: boolean }> }>('getblockchaininfo');
    assert.equal(info.chain, 'regtest');
    assert.equal(info.softforks.csv?.active, true);
    assert.equal(info.softforks.taproot?.active, true);
    const before = await node.rpc.getBlockCount();
    const hashes = await node.mine(3);
    assert.equal(hashes.length, 3);
    assert.equal(await node.rpc.getBlockCount(), before + 3);
    assert.equal(await node.rpc.getBlockHash(before + 3), hashes[2]);
    // regtest has no fee history: the fallback rate
    assert.equal(await node.rpc.feeRate(), FALLBACK_FEE_SAT_PER_VB);
    await assert.rejects(node.rpc.sendRawTransaction('00'), (err: unknown) => err instanceof BitcoinRpcError && err.code === -22);
    await assert.rejects(node.rpc.call('getrawtransaction', ['00'.repeat(32)]), (err: unknown) => err instanceof BitcoinRpcError && err.code === -5);
  } finally {
    await node.stop();
  }
});
