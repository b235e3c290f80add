// Ports of the local chains: a port held, then released, is seen free within the wait and not before.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort, portFreeWithin, portIsFree } from '../../src/localnet/free-port.ts';

test('portFreeWithin waits for a held port to be released, and answers false when it stays held', async () => {
  const port = await freePort();
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  assert.equal(await portIsFree(port), false);
  assert.equal(await portFreeWithin(port, 0), false, 'held, and no wait');
  assert.equal(await portFreeWithin(port, 150), false, 'held for the whole wait');
  setTimeout(() => holder.close(), 200);
  assert.equal(await portFreeWithin(port, 5_000), true, 'released during the wait');
});
