import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { VERSION } from '../version.ts';
import { httpApiClient } from './api-client.ts';
import { createMcpServer } from './server.ts';

/**
 * `hashlock mcp`: the MCP server over stdio for a local agent, a client of a running service's HTTP API
 * as the app whose key it is given. It holds that key and nothing else: no wallet, no private key.
 * Resolves when the agent closes stdin.
 */
export async function runStdioMcp(options: { url: string; key: string }): Promise<void> {
  const server = createMcpServer(httpApiClient(options.url, options.key), VERSION);
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
}
