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

test('a call refused because the node\'s RPC work queue is full is asked again, so a burst of calls all succeed', async (t) => {
  // One RPC thread with a queue of one, the thread held for a second by waitfornewblock: of 40 calls
  // at once, the queue takes one and the node refuses the others (HTTP 500 or 503, "Work queue depth exceeded").
  const node = await litecoinNodeOrSkip(t, ['-rpcthreads=1', '-rpcworkqueue=1']);
  if (!node) return;
  const holdThread = () => node.rpc.call('waitfornewblock', [1_000]);
  try {
    const height = await node.rpc.getBlockCount();
    const held = holdThread();
    await new Promise((r) => setTimeout(r, 100));
    const refused = await Promise.all(
      Array.from({ length: 40 }, () =>
        fetch(node.rpcUrl, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(readFileSync(node.cookieFile, 'utf8').trim()).toString('base64')}` },
          body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'getblockcount', params: [] }),
        }).then(async (res) => res.status >= 500 && /^Work queue depth exceeded/.test(await res.text())),
      ),
    );
    assert.ok(refused.filter(Boolean).length >= 30, 'the node refuses most of a burst with a full work queue');
    await held;
    const heldAgain = holdThread();
    await new Promise((r) => setTimeout(r, 100));
    const heights = await Promise.all(Array.from({ length: 40 }, () => node.rpc.getBlockCount()));
    await heldAgain;
    assert.deepEqual(heights, Array.from({ length: 40 }, () => height));
  } finally {
    await node.stop();
  }
});
