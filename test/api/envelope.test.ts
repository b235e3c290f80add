import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { describeEachStore } from '../helpers/stores.ts';

/** Sends raw bytes to the server and reads the whole answer (the server closes the connection). */
function rawRequest(port: number, bytes: Buffer): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
    socket.end(bytes);
  });
}

const ID = 'd'.repeat(64);

describeEachStore('one envelope for every answer', (kind) => {
  let t: TestApi;
  let port: number;
  before(async () => {
    t = await openTestApi(kind);
    await t.api.listen({ port: 0, host: '127.0.0.1' });
    port = (t.api.server.address() as { port: number }).port;
  });
  after(() => t.close());

  test('every method and path under /v3/quote fails as {error}', async () => {
    const cases: Array<[method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS', url: string, status: number]> = [
      ['DELETE', `/v3/quote/${ID}`, 404],
      ['POST', `/v3/quote/${ID}`, 404],
      ['PUT', `/v3/quote/${ID}`, 404],
      ['PATCH', `/v3/quote/${ID}?action=refund`, 404],
      ['OPTIONS', `/v3/quote/${ID}`, 404],
      ['GET', '/v3/quote', 404],
      ['GET', '/v3/quote/', 400],
      ['GET', `/v3/quote/${ID}/more`, 404],
      ['GET', `/v3/quote/${ID}`, 404],
      ['GET', '/v3/quote/short', 400],
      ['GET', `/v3/quote/${'1'.repeat(3000)}`, 400],
    ];
    for (const [method, url, status] of cases) {
      const res = await t.api.inject({ method, url });
      assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
      const body = res.json<Record<string, unknown>>();
      assert.deepEqual(Object.keys(body), ['error'], `${method} ${url}: ${res.body}`);
      assert.equal(typeof body.error, 'string');
    }
  });

  test('a body over the limit gets 413 in the envelope', async () => {
    const res = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key, 'content-type': 'application/json' },
      payload: `{"nonce":"${'n'.repeat(200 * 1024)}"}`,
    });
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), { status: 'Error', error: 'request body too large', code: 'payload_too_large' });
  });

  test("requests Node's parser refuses get the envelope, not Node's own shape", async () => {
    const cases: Array<[name: string, bytes: Buffer, status: number, code: string]> = [
      ['a NUL in the request line', Buffer.from('GET /v3/chains\0 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'), 400, 'invalid_request'],
      ['a non-ASCII byte in the request line', Buffer.from('GET /v3/ch\xe9ins HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'), 400, 'invalid_request'],
      ['a bad method', Buffer.from('G@T / HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'), 400, 'invalid_request'],
      ['not HTTP at all', Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', 'latin1'), 400, 'invalid_request'],
      ['headers over 16 KB', Buffer.from(`GET /v3/chains HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 'latin1'), 431, 'headers_too_large'],
    ];
    for (const [name, bytes, status, code] of cases) {
      const res = await rawRequest(port, bytes);
      assert.equal(res.status, status, `${name}: ${res.headers} ${res.body}`);
      assert.match(res.headers, /content-type: application\/json/i, name);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      assert.equal(body.status, 'Error', name);
      assert.equal(body.code, code, name);
      assert.equal(typeof body.error, 'string', name);
    }
  });

  test('unknown routes and methods answer in the envelope', async () => {
    for (const [method, url] of [
      ['GET', '/nothing'],
      ['DELETE', '/v3/chains'],
      ['PUT', '/v2/orders'],
    ] as const) {
      const res = await t.api.inject({ method, url });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(Object.keys(res.json<object>()).sort(), ['code', 'error', 'status']);
    }
  });
});
