// An agent's swap through the MCP server against `hashlock serve` on two anvil chains (PostgreSQL), on
// both transports: the agent creates the order with create_order, the test (the user's wallet) signs
// and sends the `initiate` it returned, the agent reports it with index_initiate and follows
// get_order_status until completed. Nothing the agent sees holds the secret or a key.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { createWalletClient, http, type Address, type Hex } from 'viem';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { serviceForSuite, skipWithoutPostgres } from '../e2e/service-process.ts';

type Json = Record<string, any>;

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');
const skip = skipWithoutPostgres('the MCP end-to-end swaps');
const suite = serviceForSuite({ database: 'hashlock_mcp_flow' }, skip);
const user = devAccount('user');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an agent swaps through the MCP server', { skip }, () => {
  const transports: Array<[string, () => Transport]> = [
    [
      'streamable HTTP at /mcp',
      () => new StreamableHTTPClientTransport(new URL(`${suite.service!.api}/mcp`), { requestInit: { headers: { 'garden-app-id': suite.service!.key } } }),
    ],
    [
      'stdio (hashlock mcp)',
      () =>
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'mcp', '--url', suite.service!.api],
          env: { PATH: process.env.PATH ?? '', HASHLOCK_API_KEY: suite.service!.key },
        }),
    ],
  ];

  for (const [name, transport] of transports) {
    test(`${name}: create_order, the user's wallet initiates, index_initiate, completed`, async () => {
      const { eth } = suite.world!;
      const client = new Client({ name: 'agent', version: '0' });
      await client.connect(transport());
      const outputs: string[] = [];
      const call = async (tool: string, args: Json) => {
        const res = (await client.callTool({ name: tool, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> };
        const text = res.content.map((c) => c.text).join('');
        outputs.push(text);
        return { isError: res.isError === true, text, json: () => JSON.parse(text) as Json };
      };
      try {
        const request = {
          source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: '100000' },
          destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address },
          slippage: 50,
        };
        let created = await call('create_order', request);
        // A service just started reads the solver's balances within seconds.
        for (const end = Date.now() + 30_000; created.isError && /insufficient liquidity/.test(created.text) && Date.now() < end; ) {
          await pause(500);
          created = await call('create_order', request);
        }
        assert.equal(created.isError, false, created.text);
        const q = created.json().quotes[0];

        // The user's wallet, not the agent, signs and sends what the order returned.
        const wallet = createWalletClient({ account: user, transport: http(eth.node.rpcUrl) });
        const send = async (tx: { to: Address; data: Hex; value: Hex; gas_limit: Hex }) => {
          const hash = await wallet.sendTransaction({ chain: undefined, to: tx.to, data: tx.data, value: BigInt(tx.value), gas: BigInt(tx.gas_limit) });
          assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
          return hash;
        };
        if (q.initiate.approval_transaction) await send(q.initiate.approval_transaction);
        const initiated = await send(q.initiate.initiate_transaction);
        const indexed = await call('index_initiate', { id: q.id, tx_hash: initiated });
        assert.equal(indexed.isError, false, indexed.text);

        let status = '';
        for (const end = Date.now() + 120_000; status !== 'completed'; await pause(500)) {
          const order = await call('get_order_status', { order_id: q.id });
          assert.equal(order.isError, false, order.text);
          status = order.json().status;
          assert.ok(!['expired', 'refunded'].includes(status), status);
          assert.ok(Date.now() < end, `not completed: ${order.text}`);
        }
        // The event log records a status after the order shows it (the recorder's pass follows the change).
        let events: Json[] = [];
        for (const end = Date.now() + 10_000; events.at(-1)?.status !== 'completed' && Date.now() < end; await pause(200)) {
          events = (await call('get_order_events', { order_id: q.id })).json().events as Json[];
        }
        assert.deepEqual(events.at(-1)?.status, 'completed');
        const orders = (await call('get_all_user_orders', { address: user.address, status: 'completed' })).json();
        assert.ok(orders.data.some((o: Json) => o.order_id === q.id));

        // The secret is on chain by now; the agent still never got it, nor any key.
        const all = outputs.join('\n').toLowerCase();
        const roles = ['deployer', 'solver', 'relayer', 'user', 'feeSigner'] as const;
        for (const key of roles.map((r) => privateKeyOf(devAccount(r)).slice(2).toLowerCase())) assert.equal(all.includes(key), false);
        assert.equal(all.includes(suite.service!.key), false);
        assert.equal(/"secret"/.test(all), false);
        const { secret } = ((await suite.service!.call(`/v2/orders/${q.id}`)) as Json).destination_swap;
        assert.match(secret, /^[0-9a-f]{64}$/, 'the order API shows the secret revealed on chain');
        assert.equal(all.includes(secret), false);
      } finally {
        await client.close();
      }
    });
  }
});
