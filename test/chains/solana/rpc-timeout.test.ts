// A Solana node that takes a call and never answers fails the call after the client's timeout, as a
// node out of reach: a worker's pass is never held forever, and the engine defers rather than counting an attempt.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { isNodeUnreachable } from '../../../src/chains/solana/chain-errors.ts';
import { solanaRpc } from '../../../src/chains/solana/rpc.ts';

let server: Server;
let url: string;
before(async () => {
  server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

test('a call the node never answers fails after the timeout, and counts as the node out of reach', async () => {
  const started = Date.now();
  const err = await solanaRpc(url, 300)
    .getBlockHeight()
    .send()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  const waited = Date.now() - started;
  assert.ok(err, 'the call failed');
  assert.ok(waited >= 250 && waited < 5_000, `failed after the timeout, not before and not never: ${waited} ms`);
  assert.equal(isNodeUnreachable(err), true);
});
