import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { addAcceptHandles } from '../../src/api/accept-handles.ts';

/**
 * Connections already waiting in the kernel's queue that the server accepts in one turn of its loop:
 * the connections it emits before a setImmediate queued while the loop was blocked runs.
 */
async function acceptedInOneTurn(server: http.Server, port: number, waiting: number): Promise<{ inOneTurn: number; sockets: net.Socket[] }> {
  let accepted = 0;
  server.on('connection', () => accepted++);
  const sockets = Array.from({ length: waiting }, () => net.connect({ port, host: '127.0.0.1' }));
  await Promise.all(sockets.map((s) => once(s, 'connect')));
  // Every handshake is done (the kernel queued them). From the check phase of a turn, an immediate
  // queued there runs in the next turn's: the accepts of that turn's poll phase are counted between.
  await new Promise((resolve) => setImmediate(resolve));
  const before = accepted;
  const inOneTurn = await new Promise<number>((resolve) => setImmediate(() => resolve(accepted - before)));
  assert.ok(waiting - before > 8, `only ${waiting - before} connections were still waiting`);
  return { inOneTurn, sockets };
}

async function listening(): Promise<{ server: http.Server; port: number; get: () => Promise<string> }> {
  const server = http.createServer((_req, res) => res.end('ok'));
  server.listen({ port: 0, host: '127.0.0.1', backlog: 512 });
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  // One request on a connection of its own; its body.
  const get = () =>
    new Promise<string>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
  return { server, port, get };
}

test('a server with 8 handles of its socket accepts 8 waiting connections in one turn of its loop, one without', async () => {
  for (const copies of [0, 7]) {
    const { server, port } = await listening();
    const handles = await addAcceptHandles(server, copies, { onError: (err) => assert.fail(err) });
    assert.equal(handles.added, copies);
    const { inOneTurn, sockets } = await acceptedInOneTurn(server, port, 40);
    assert.equal(inOneTurn, copies + 1);
    for (const s of sockets) s.destroy();
    await handles.close();
    await new Promise((r) => server.close(r));
  }
});

test('a connection accepted on a copy is served by the server as its own, and closing the copies stops them accepting', async () => {
  const { server, port, get } = await listening();
  const handles = await addAcceptHandles(server, 3, { onError: (err) => assert.fail(err) });
  const bodies = await Promise.all(Array.from({ length: 30 }, get));
  assert.deepEqual(new Set(bodies), new Set(['ok']));
  await handles.close();
  await new Promise((r) => server.close(r));
  // Every descriptor of the socket is closed: nothing listens on the port any more.
  await assert.rejects(new Promise((resolve, reject) => net.connect({ port, host: '127.0.0.1' }).on('connect', resolve).on('error', reject)), /ECONNREFUSED/);
});

test('connections that arrive while the copies are being made are all answered by the server', async () => {
  const { server, get } = await listening();
  const early: Array<Promise<string>> = [];
  const arriving = setInterval(() => early.push(...Array.from({ length: 5 }, get)), 1);
  const handles = await addAcceptHandles(server, 7, { onError: (err) => assert.fail(err) });
  await new Promise((r) => setTimeout(r, 200)); // past the echo child's end
  clearInterval(arriving);
  const bodies = await Promise.all(early);
  assert.ok(bodies.length > 50);
  assert.deepEqual(new Set(bodies), new Set(['ok']));
  await handles.close();
  await new Promise((r) => server.close(r));
});
