import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY_HEADER, API_KEY_HEADER_ALIAS } from '../api/auth.ts';
import type { ApiContext } from '../api/context.ts';
import { errorResponses } from '../api/schemas.ts';
import { AppError } from '../errors.ts';
import { injectApiClient } from './api-client.ts';

/**
 * The MCP SDK, loaded by the first call: about 25 MB resident that a service nobody asks over MCP
 * need not hold.
 */
const mcpModules = async () => {
  const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./server.ts')]);
  return { StreamableHTTPServerTransport, createMcpServer };
};

/** The key the request was let in with (auth.onRequest has checked it). */
function keyOf(request: FastifyRequest): string {
  const value = request.headers[API_KEY_HEADER] ?? request.headers[API_KEY_HEADER_ALIAS];
  return Array.isArray(value) ? value[0]! : value!;
}

/**
 * The MCP server over streamable HTTP at `/mcp`, stateless: each POST is answered by a server of its
 * own, acting as the app whose key the request carries (401 without a valid one), through this
 * process's own routes. The POST counts once against the rate limit, whatever its tools call.
 * Answers are JSON, not event streams; GET and DELETE are 405.
 */
export function mcpRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const schema = {
    summary: 'Model Context Protocol (streamable HTTP, stateless)',
    description: "JSON-RPC messages of MCP; the tools act as the key's app. See docs/api.md, \"MCP server\".",
    tags: ['mcp'],
  };

  app.post('/mcp', { onRequest: ctx.auth.onRequest, schema: { ...schema, response: errorResponses(400, 401) } }, async (request, reply) => {
    const { StreamableHTTPServerTransport, createMcpServer } = await mcpModules();
    const server = createMcpServer(injectApiClient(app, keyOf(request), ctx.inProcess.headers()), ctx.version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the answer itself: keep the headers set so far (the rate limit's).
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      onRequest: ctx.auth.onRequest,
      schema: { ...schema, hide: true },
      handler: async (_request, reply) => {
        void reply.header('allow', 'POST');
        throw new AppError('method_not_allowed', `${method} /mcp: this MCP endpoint is stateless and takes POST only`);
      },
    });
  }
}
