import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiContext } from '../api/context.ts';
import { HexId } from '../api/schemas.ts';
import { explorerApiRoutes } from './api.ts';
import { explorerStreamRoutes } from './streams.ts';

/** The page may load only its own script, style and JSON: no inline code, no other origin, no frames. */
export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const file = (name: string) => readFileSync(new URL(name, import.meta.url), 'utf8');

/** The explorer's static files, read once: plain HTML, CSS and one ES module, no build step. */
const FILES = {
  page: { body: file('./page.html'), type: 'text/html; charset=utf-8' },
  script: { body: file('./explorer.js'), type: 'text/javascript; charset=utf-8' },
  style: { body: file('./explorer.css'), type: 'text/css; charset=utf-8' },
  icon: { body: file('./icon.svg'), type: 'image/svg+xml; charset=utf-8' },
};

function sendFile(reply: FastifyReply, f: { body: string; type: string }) {
  return reply
    .type(f.type)
    .header('content-security-policy', EXPLORER_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .send(f.body);
}

/**
 * The order explorer: the page at /explorer (recent orders, search) and /explorer/orders/{id} (one
 * order), its script and style, the public JSON they read (api.ts) and their event streams (streams.ts).
 */
export function explorerRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const hidden = { schema: { hide: true } };
  app.get('/explorer', hidden, async (_request, reply) => sendFile(reply, FILES.page));
  app.get('/explorer/', hidden, async (_request, reply) => sendFile(reply, FILES.page));
  // A malformed id still gets the page (a person typed or pasted it), as a 400: the page reads the
  // order through the JSON API and shows that API's error, which names the parameter.
  const orderId = new RegExp(HexId.pattern!);
  app.get<{ Params: { order: string } }>('/explorer/orders/:order', hidden, async (request, reply) =>
    sendFile(orderId.test(request.params.order) ? reply : reply.code(400), FILES.page),
  );
  app.get('/explorer/assets/explorer.js', hidden, async (_request, reply) => sendFile(reply, FILES.script));
  app.get('/explorer/assets/explorer.css', hidden, async (_request, reply) => sendFile(reply, FILES.style));
  app.get('/explorer/assets/icon.svg', hidden, async (_request, reply) => sendFile(reply, FILES.icon));
  explorerApiRoutes(app, ctx);
  explorerStreamRoutes(app, ctx);
}
