// The test proxy itself: what the node-outage tests take it to do, over a real HTTP server.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

let server: Server;
let requests = 0;
let proxy: TcpProxy;
let url: string;

before(async () => {
  // Answers the request body back; `/close` answers in three chunks and closes the connection.
  server = createServer((req, res) => {
    requests++;
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/close') {
        res.writeHead(200, { connection: 'close' });
        res.write('one ');
        setTimeout(() => res.write('two '), 20);
        setTimeout(() => res.end('three'), 40);
        return;
      }
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy = await startTcpProxy({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  url = proxy.through(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});
after(async () => {
  await proxy.close();
  await new Promise((resolve) => server.close(resolve));
});

const timed = async (path: string, body?: string) => {
  const start = Date.now();
  const res = await fetch(new URL(path, url), { method: body === undefined ? 'GET' : 'POST', ...(body === undefined ? {} : { body }) });
  return { text: await res.text(), ms: Date.now() - start };
};

test('slow(ms) answers every call ms late, in order and whole; fast() ends it', async () => {
  assert.ok((await timed('/', 'quick')).ms < 300, 'at once before slow()');
  proxy.slow(400);
  const answers = await Promise.all(['a', 'b', 'c'].map((b) => timed('/', b.repeat(100_000))));
  for (const [i, b] of ['a', 'b', 'c'].entries()) {
    assert.equal(answers[i]!.text, b.repeat(100_000), 'each answer whole, its chunks in order');
    assert.ok(answers[i]!.ms >= 400, `answered ${answers[i]!.ms} ms late`);
  }
  // A server that ends the connection: the end comes after the chunks it sent before it.
  const closing = await timed('/close');
  assert.equal(closing.text, 'one two three');
  assert.ok(closing.ms >= 400);
  proxy.fast();
  assert.ok((await timed('/', 'quick again')).ms < 300, 'at once after fast()');
});

test('cut() ends open connections and refuses new ones until restore()', async () => {
  proxy.slow(2_000);
  const pending = timed('/', 'held back');
  await new Promise((r) => setTimeout(r, 200));
  proxy.cut();
  await assert.rejects(pending, 'the connection holding the answer is gone');
  await assert.rejects(timed('/', 'refused'));
  proxy.restore();
  proxy.fast();
  assert.equal((await timed('/', 'back')).text, 'back');
});

test("slow(ms, 'requests') holds what the client sends: cut meanwhile, the server never sees it", async () => {
  proxy.slow(400, 'requests');
  const before = requests;
  const answer = await timed('/', 'late');
  assert.equal(answer.text, 'late');
  assert.ok(answer.ms >= 400, `asked ${answer.ms} ms late`);
  assert.equal(requests, before + 1);
  const pending = timed('/', 'never');
  await new Promise((r) => setTimeout(r, 100));
  proxy.cut();
  await assert.rejects(pending);
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(requests, before + 1, 'the request held when the connection was cut never reached the server');
  proxy.restore();
  proxy.fast();
});
