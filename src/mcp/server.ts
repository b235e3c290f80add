import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApiClient } from './api-client.ts';
import { inputProblem, TOOLS, withoutSecrets } from './tools.ts';

/** The service's OpenAPI document: every request and result schema of the tools' calls. */
const OPENAPI_URI = 'hashlock://openapi.json';
/** A contract schema (an HTLC's or token's ABI) by the asset list's schema name: GET /v2/schemas/{name}. */
const SCHEMA_URI = 'hashlock://schemas/';

const INSTRUCTIONS =
  'Cross-chain atomic swaps. Price with get_quote, create with create_order, then have the user\'s wallet sign and ' +
  'send the returned `initiate`; follow with get_order_status. This server never signs and never sees a private key.';

const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** The MCP server over one app's view of the HTTP API (`api`); the caller connects it to a transport. */
export function createMcpServer(api: ApiClient, version: string): Server {
  const server = new Server({ name: 'hashlock', version }, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const t = TOOLS.find((candidate) => candidate.name === request.params.name);
    if (!t) return failure(`unknown tool ${request.params.name.slice(0, 100)}`);
    const args = request.params.arguments ?? {};
    const problem = inputProblem(t, args);
    if (problem) return failure(problem);
    const { status, body } = await t.call(api, args);
    const answer = body as { result?: unknown; error?: unknown };
    if (status >= 400) return failure(`${status}: ${typeof answer.error === 'string' ? answer.error : 'the service refused the request'}`);
    return { content: [{ type: 'text', text: JSON.stringify(withoutSecrets(answer.result ?? null)) }] };
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const { status, body } = await api('GET', '/v2/schemas');
    const schemas = status === 200 ? (body as { result: Array<{ name: string }> }).result : [];
    return {
      resources: [
        {
          uri: OPENAPI_URI,
          name: 'openapi',
          title: 'Hashlock OpenAPI document',
          description: 'Every endpoint the tools call, with its parameters, bodies and results (JSON Schema)',
          mimeType: 'application/json',
        },
        ...schemas.map(({ name }) => ({
          uri: `${SCHEMA_URI}${name}`,
          name,
          title: `${name} contract ABI`,
          description: `The ABI of the contracts whose asset list schema is ${name}`,
          mimeType: 'application/json',
        })),
      ],
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const path = uri === OPENAPI_URI ? '/docs/json' : uri.startsWith(SCHEMA_URI) ? `/v2/schemas/${encodeURIComponent(uri.slice(SCHEMA_URI.length))}` : undefined;
    if (!path) throw new Error(`unknown resource ${uri.slice(0, 200)}`);
    const { status, body } = await api('GET', path);
    if (status !== 200) throw new Error(`${uri.slice(0, 200)} is not available (${status})`);
    const content = uri === OPENAPI_URI ? body : (body as { result: { schema: unknown } }).result.schema;
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(content) }] };
  });

  return server;
}
