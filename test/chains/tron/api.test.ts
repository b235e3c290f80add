// The Tron HTTP API client: what it reads from the local Tron chain (blocks, a block's transaction
// infos, a constant call, balances, a broadcast's verdict), the API key header it sends, and which
// failures are node faults (never a job's attempt): no connection, a timeout, HTTP 5xx and 429, a
// proxy's page that is not JSON; while a node's `{"Error": ...}` answer is a refusal.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { TronApi, TronApiError, TronNodeUnreachable } from '../../../src/chains/tron/api.ts';
import { isNodeUnreachable } from '../../../src/chains/tron/chain-errors.ts';
import { hex41 } from '../../../src/chains/tron/transactions.ts';
import { startTronTestChain, tronAddressOf, type TronTestChain } from '../../helpers/tron-localnet.ts';

let c: TronTestChain;

before(async () => (c = await startTronTestChain()));
after(() => c?.stop());

/** A server answering every request with `status` and `body` (after `delayMs`), keeping the headers it got. */
async function fakeNode(status: number, body: string, delayMs = 0): Promise<{ url: string; headers: IncomingHttpHeaders[]; server: Server }> {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, headers, server };
}

test('blocks chain to each other; a block past the head is none', async () => {
  await c.localnet.mine(2);
  const head = await c.api.nowBlock();
  const parent = (await c.api.blockByNumber(head.number - 1n))!;
  assert.equal(head.parentId, parent.blockId);
  assert.equal(head.blockId.slice(0, 16), head.number.toString(16).padStart(16, '0'));
  assert.ok(head.timestampMs > parent.timestampMs);
  assert.equal(await c.api.blockByNumber(head.number + 10n), undefined);
  assert.equal((await c.api.nowBlock(true)).number, head.number - 1n, 'solidified one block behind');
  assert.deepEqual(await c.api.transactionInfosOfBlock(head.number), [], 'an empty block has no infos');
});

test('constant calls, balances, and a refused broadcast with its code and decoded message', async () => {
  const user = tronAddressOf('user');
  const decimals = await c.api.constantCall({ owner: hex41(user), contract: hex41(c.deployment.usdt), data: '313ce567' });
  assert.deepEqual([decimals.ok, BigInt(`0x${decimals.output}`)], [true, 6n]);
  const reverted = await c.api.constantCall({ owner: hex41(user), contract: hex41(c.deployment.usdt), data: 'deadbeef' });
  assert.equal(reverted.ok, false);
  assert.ok((await c.api.balanceSun(hex41(user))) > 0n);
  assert.equal(await c.api.balanceSun(hex41(tronAddressOf('deployer')).replace(/.$/, '9')), 0n, 'an unknown account has none');
  const refused = await c.api.broadcast({ txID: '00'.repeat(32), raw_data: {}, raw_data_hex: '' });
  assert.equal(refused.result, false);
  assert.ok(refused.code);
  assert.ok(refused.message && !/^[0-9a-f]+$/.test(refused.message), `decoded: ${refused.message}`);
  assert.equal(await c.api.transactionInfo('ab'.repeat(32)), undefined);
});

test('the API key goes in the TRON-PRO-API-KEY header when configured, and nowhere otherwise', async () => {
  const node = await fakeNode(200, JSON.stringify({ blockID: '00'.repeat(32), block_header: { raw_data: { number: 0, timestamp: 0 } } }));
  try {
    await new TronApi(node.url, { apiKey: 'k-123' }).nowBlock();
    await new TronApi(node.url).nowBlock();
    assert.equal(node.headers[0]!['tron-pro-api-key'], 'k-123');
    assert.equal(node.headers[1]!['tron-pro-api-key'], undefined);
  } finally {
    node.server.close();
  }
});

test('no connection, a timeout, 5xx, 429 and a non-JSON page are node faults; an Error answer or a 400 is a refusal', async () => {
  const closed = await fakeNode(200, '{}');
  closed.server.close();
  const faults: Array<[string, () => Promise<unknown>]> = [['refused connection', () => new TronApi(closed.url).nowBlock()]];
  const servers: Server[] = [];
  for (const [status, body, delay, label] of [
    [503, '{}', 0, '503'],
    [502, '<html>bad gateway</html>', 0, '502 page'],
    [429, '{"Error":"rate limited"}', 0, '429'],
    [200, '<html>maintenance</html>', 0, 'a page that is not JSON'],
    [200, '{}', 500, 'a timeout'],
  ] as const) {
    const node = await fakeNode(status, body, delay);
    servers.push(node.server);
    faults.push([label, () => new TronApi(node.url, { timeoutMs: 200 }).nowBlock()]);
  }
  try {
    for (const [label, call] of faults) {
      await assert.rejects(call(), (err: unknown) => err instanceof TronNodeUnreachable && isNodeUnreachable(err), label);
    }
    const erroring = await fakeNode(200, '{"Error":"class org.tron.core.exception.BadItemException"}');
    const bad = await fakeNode(400, '{"Error":"bad request"}');
    servers.push(erroring.server, bad.server);
    for (const url of [erroring.url, bad.url]) {
      await assert.rejects(new TronApi(url).nowBlock(), (err: unknown) => err instanceof TronApiError && !isNodeUnreachable(err));
    }
  } finally {
    for (const s of servers) s.closeAllConnections();
    for (const s of servers) s.close();
  }
});
