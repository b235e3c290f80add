// The node's RPC client when the node closes a connection under a call (as Bitcoin and Litecoin Core
// close keep-alive connections left idle past `-rpcservertimeout`): a call that cannot have spent or
// mined anything is asked again on a new connection; one that might have is not.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { BitcoinRpc } from '../../../src/chains/bitcoin/rpc.ts';

/** An HTTP JSON-RPC endpoint that closes the connection of a request unanswered when told to (`closeNext`), and answers the others with 7. */
let server: Server;
let requests: string[] = [];
let closeNext = false;
before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      requests.push((JSON.parse(body) as { method: string }).method);
      if (closeNext) {
        closeNext = false;
        req.socket.destroy();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ result: 7, error: null, id: 1 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const rpc = () => new BitcoinRpc({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, auth: { user: 'u', password: 'p' } });

test('a read whose connection is closed unanswered is asked again, once, on a new connection', async () => {
  requests = [];
  closeNext = true;
  assert.equal(await rpc().call<number>('getblockcount'), 7);
  assert.deepEqual(requests, ['getblockcount', 'getblockcount']);
});

test('a call that spends or mines is not asked again: its first attempt might have run', async () => {
  for (const method of ['sendtoaddress', 'generatetoaddress']) {
    requests = [];
    closeNext = true;
    await assert.rejects(rpc().call(method, []), /fetch failed/);
    assert.deepEqual(requests, [method]);
  }
});
