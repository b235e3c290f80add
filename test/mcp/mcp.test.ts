// The MCP server through the SDK's own client, on both transports: streamable HTTP at the service's
// /mcp (the API listening on a free loopback port) and stdio (`hashlock mcp` as a child process, a
// client of that API). Tools are listed, a quote priced, an order created; bad input and missing keys
// are refused; no tool hands out the order's secret or any key.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { createApp } from '../../src/store/apps.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { SOLVER, USER } from '../helpers/fixtures.ts';

type Json = Record<string, any>;

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');
const TOOL_NAMES = [
  'create_order', 'get_all_user_orders', 'get_assets', 'get_chains', 'get_liquidity', 'get_order_events', 'get_order_status',
  'get_policy', 'get_quote', 'index_initiate',
];
const DEV_KEYS = (['deployer', 'solver', 'relayer', 'user', 'feeSigner'] as const).map((role) => privateKeyOf(devAccount(role)).slice(2).toLowerCase());

const order = {
  source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
  destination: { asset: 'arbitrum_localnet:wbtc', owner: USER },
  slippage: 50,
};

describe('the MCP server', () => {
  let t: TestApi;
  let base: string;
  /** Every text a tool returned, to look for secrets in. */
  const seen: string[] = [];

  before(async () => {
    t = await openTestApi('pglite');
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 10n ** 12n });
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  const connect = async (transport: Transport) => {
    const client = new Client({ name: 'hashlock-test', version: '0' });
    await client.connect(transport);
    return client;
  };
  const httpTransport = (key: string) => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'garden-app-id': key } } });
  const stdioTransport = (key: string) =>
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--url', base],
      env: { PATH: process.env.PATH ?? '', HASHLOCK_API_KEY: key },
      stderr: 'pipe',
    });

  const callTool = async (client: Client, name: string, args: Json = {}) => {
    const res = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> };
    const text = res.content.map((c) => c.text).join('');
    seen.push(text);
    return { isError: res.isError === true, text, json: () => JSON.parse(text) as Json };
  };

  for (const [name, transport] of [['streamable HTTP at /mcp', httpTransport], ['stdio (hashlock mcp)', stdioTransport]] as const) {
    test(`${name}: lists the tools, prices, creates an order and reads it back`, async () => {
      const client = await connect(transport(t.key));
      try {
        const tools = (await client.listTools()).tools;
        assert.deepEqual(tools.map((x) => x.name).sort(), TOOL_NAMES);
        const create = tools.find((x) => x.name === 'create_order')!;
        assert.deepEqual(create.inputSchema.required, ['source', 'destination', 'slippage'], 'the input schema is the API\'s');

        const quote = await callTool(client, 'get_quote', { from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', from_amount: '100000' });
        assert.equal(quote.isError, false, quote.text);
        const [best] = quote.json() as unknown as Json[];
        assert.equal(best!.solver_id, SOLVER.id);

        const created = await callTool(client, 'create_order', order);
        assert.equal(created.isError, false, created.text);
        const q = created.json().quotes[0];
        assert.equal(q.destination.amount, best!.destination.amount);
        assert.equal(q.initiate.type, 'evm');
        assert.ok(q.initiate.initiate_transaction.data.startsWith('0x97ffc7ae'), 'the signing data for the user\'s wallet');

        const status = await callTool(client, 'get_order_status', { order_id: q.id });
        assert.equal(status.json().status, 'not_initiated');
        assert.equal(status.json().source_swap.swap_id, q.source_swap_id);
        assert.equal('secret' in status.json().source_swap, false, 'no secret field, even an empty one');
        const events = await callTool(client, 'get_order_events', { order_id: q.id });
        assert.equal(events.isError, false, events.text);
        assert.ok(Array.isArray(events.json().events));
        const mine = await callTool(client, 'get_all_user_orders', { address: USER, status: 'not_initiated' });
        assert.ok(mine.json().data.some((o: Json) => o.order_id === q.id));
        for (const tool of ['get_chains', 'get_assets', 'get_liquidity', 'get_policy']) {
          const res = await callTool(client, tool);
          assert.equal(res.isError, false, `${tool}: ${res.text}`);
        }
        assert.equal((await callTool(client, 'get_assets', { from: 'arbitrum_localnet:wbtc' })).json()[0].id, 'arbitrum_localnet:wbtc');

        const resources = (await client.listResources()).resources;
        assert.deepEqual(
          resources.map((r) => r.uri),
          ['hashlock://openapi.json', ...['evm:htlc_erc20', 'evm:htlc', 'tron:htlc_trc20', 'evm:erc20', 'tron:trc20'].map((n) => `hashlock://schemas/${n}`)],
        );
        const [content] = (await client.readResource({ uri: 'hashlock://openapi.json' })).contents as Array<{ text: string }>;
        const doc = JSON.parse(content!.text) as Json;
        assert.ok(doc.paths['/v3/quote'].post);
        const [abi] = (await client.readResource({ uri: 'hashlock://schemas/evm:htlc_erc20' })).contents as Array<{ text: string }>;
        assert.ok((JSON.parse(abi!.text) as Json[]).some((e) => e.type === 'function' && e.name === 'initiateWithSignature'), 'the HTLC ABI');
        await assert.rejects(client.readResource({ uri: 'hashlock://schemas/solana:htlc' }), /not available \(404\)/);
      } finally {
        await client.close();
      }
    });

    test(`${name}: input is checked as the API checks it, and the API's refusals come back as tool errors`, async () => {
      const client = await connect(transport(t.key));
      try {
        const notString = await callTool(client, 'create_order', { ...order, source: { ...order.source, amount: 100000 } });
        assert.equal(notString.isError, true);
        assert.match(notString.text, /invalid argument 'source\.amount'/);
        const missing = await callTool(client, 'get_quote', { from: 'ethereum_localnet:wbtc' });
        assert.match(missing.text, /invalid argument 'to'/);
        const extra = await callTool(client, 'get_policy', { verbose: true });
        assert.equal(extra.isError, true);
        const refused = await callTool(client, 'create_order', { ...order, source: { ...order.source, asset: 'nowhere:wbtc' } });
        assert.equal(refused.isError, true);
        assert.match(refused.text, /^400: invalid body field 'source\.asset'/);
        const unknown = await callTool(client, 'get_order_status', { order_id: 'ab'.repeat(32) });
        assert.match(unknown.text, /^404: order/);
        const badId = await callTool(client, 'get_order_status', { order_id: 'xyz' });
        assert.match(badId.text, /invalid argument 'order_id'/);
      } finally {
        await client.close();
      }
    });
  }

  test('a request without a valid key is refused on both transports', async () => {
    for (const headers of [{}, { 'garden-app-id': 'f'.repeat(64) }] as Array<Record<string, string>>) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as Json).code, 'unauthorized');
    }
    await assert.rejects(connect(httpTransport('0'.repeat(64))), /401|unknown API key/);
    const get = await fetch(`${base}/mcp`, { headers: { 'garden-app-id': t.key } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');

    // stdio: without a key the command refuses to start; with a wrong one every tool call is refused.
    const noKey = spawnSync(process.execPath, [BIN, 'mcp', '--url', base], { env: { PATH: process.env.PATH ?? '' }, input: '', encoding: 'utf8' });
    assert.equal(noKey.status, 2);
    assert.match(noKey.stderr, /HASHLOCK_API_KEY/);
    const client = await connect(stdioTransport('0'.repeat(64)));
    try {
      const res = await callTool(client, 'get_chains');
      assert.equal(res.isError, true);
      assert.match(res.text, /^401: unknown API key/);
    } finally {
      await client.close();
    }
  });

  test('malformed messages to /mcp get the protocol\'s 4xx errors, never a 500', async () => {
    for (const body of ['{}', '[1,2]', 'null', '{"jsonrpc":"2.0","id":1,"method":"nope"}']) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'garden-app-id': t.key },
        body,
      });
      const answer = (await res.json()) as Json;
      assert.ok(res.status === 400 || (res.status === 200 && answer.error?.code === -32601), `${body}: ${res.status} ${JSON.stringify(answer)}`);
      assert.ok(answer.error, body);
    }
    const bad = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', 'garden-app-id': t.key }, body: '{' });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as Json).code, 'invalid_request');
  });

  test('no tool output holds an order secret, the app key or a dev private key', async () => {
    const rows = await t.store.db.selectFrom('orders').select('secret_ciphertext').where('secret_ciphertext', 'is not', null).execute();
    assert.ok(rows.length >= 2, 'orders made through the tools');
    const secrets = rows.map((r) => Buffer.from(t.secrets.open(r.secret_ciphertext!)).toString('hex'));
    const all = seen.join('\n').toLowerCase();
    assert.ok(all.length > 10_000, 'the tools answered');
    for (const s of [...secrets, t.key, ...DEV_KEYS]) assert.equal(all.includes(s), false);
  });
});

describe('the MCP server and the rate limit', () => {
  const LIMIT = 6;
  let t: TestApi;
  let base: string;
  before(async () => {
    t = await openTestApi('pglite', undefined, {
      rateLimits: { perKey: { max: LIMIT, windowMs: 60_000 }, perAddress: { max: 100, windowMs: 60_000 } },
    });
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  const post = (key: string, message: Json, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'garden-app-id': key, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    });

  test('a tool call over /mcp costs what one HTTP request costs, not two', async () => {
    const { key } = await createApp(t.store.db, { name: 'mcp agent' });
    const answers: Array<{ status: number; remaining: string | null; tool: string }> = [];
    for (let id = 1; id <= LIMIT + 1; id++) {
      // Each tool call reads one route in process.
      const res = await post(key, { id, method: 'tools/call', params: { name: id % 2 ? 'get_chains' : 'get_policy', arguments: {} } });
      const body = (await res.json()) as Json;
      const tool = res.status !== 200 ? String(body.code) : body.result?.isError ? `refused: ${body.result.content?.[0]?.text}` : 'answered';
      answers.push({ status: res.status, remaining: res.headers.get('x-ratelimit-remaining'), tool });
    }
    assert.deepEqual(
      answers,
      [
        ...Array.from({ length: LIMIT }, (_, i) => ({ status: 200, remaining: String(LIMIT - 1 - i), tool: 'answered' })),
        { status: 429, remaining: '0', tool: 'rate_limited' },
      ],
      `${LIMIT} tool calls within a limit of ${LIMIT}, each /mcp request counted once, the inner route not at all`,
    );
  });

  test('the in-process mark cannot be sent by a client, and keys are still required', async () => {
    const { key } = await createApp(t.store.db, { name: 'forger' });
    const statuses: number[] = [];
    const forged = ['ab'.repeat(32), 'zz'.repeat(32), `${'ab'.repeat(31)}zz`, 'ab'.repeat(33), ''];
    for (let i = 0; i < LIMIT + 1; i++) {
      const res = await fetch(`${base}/v3/chains`, { headers: { 'garden-app-id': key, 'x-hashlock-in-process': forged[i % forged.length]! } });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [...Array(LIMIT).fill(200), 429], 'a forged mark is counted like any request');
    const noKey = await post('', { id: 1, method: 'tools/call', params: { name: 'get_chains', arguments: {} } });
    assert.equal(noKey.status, 401, 'no tool call without a key');
  });
});
