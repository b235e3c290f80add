import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { BitcoinRpcError, bitcoinRpcFor, FALLBACK_FEE_SAT_PER_VB } from '../../../src/chains/bitcoin/rpc.ts';
import { litecoinNodeOrSkip } from '../../helpers/litecoin.ts';

test('litecoind regtest starts with CSV and taproot active, mines, answers RPC errors with their codes, and takes a cookie or user:password', async (t) => {
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

    // Configured access: a cookie file, or user:password in the URL (the cookie holds such a pair).
    const height = await node.rpc.getBlockCount();
    assert.equal(await bitcoinRpcFor({ url: node.rpcUrl, cookieFile: node.cookieFile }).getBlockCount(), height);
    const [user, password] = readFileSync(node.cookieFile, 'utf8').trim().split(':');
    const withPassword = new URL(node.rpcUrl);
    withPassword.username = encodeURIComponent(user!);
    withPassword.password = encodeURIComponent(password!);
    assert.equal(await bitcoinRpcFor({ url: withPassword.toString() }).getBlockCount(), height);
    withPassword.password = 'wrong';
    await assert.rejects(bitcoinRpcFor({ url: withPassword.toString() }).getBlockCount(), (err: unknown) => err instanceof BitcoinRpcError && err.code === 401);
    await assert.rejects(bitcoinRpcFor({ url: node.rpcUrl }).getBlockCount(), (err: unknown) => err instanceof BitcoinRpcError && err.code === 401);
  } finally {
    await node.stop();
  }
});
