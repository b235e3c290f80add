import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from './json.ts';
import { INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from './rpc-error.ts';
import { Params } from './rpc-params.ts';
import type { RpcMethod } from './rpc-methods.ts';

/** Larger bodies are refused: a transaction is at most 1,644 bytes of base64, and batches stay small. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;

type Id = string | number | null;

function errorBody(id: Id, err: RpcError): Record<string, unknown> {
  return { jsonrpc: '2.0', error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) }, id };
}

async function answer(methods: Record<string, RpcMethod>, request: unknown, log: Logger | undefined): Promise<Record<string, unknown>> {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) return errorBody(null, new RpcError(INVALID_REQUEST, 'Invalid request'));
  const { id: rawId, method, params, jsonrpc } = request as Record<string, unknown>;
  const id: Id = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : typeof rawId === 'bigint' ? Number(rawId) : null;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return errorBody(id, new RpcError(INVALID_REQUEST, 'Invalid request'));
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (!handler) return errorBody(id, new RpcError(METHOD_NOT_FOUND, 'Method not found'));
  try {
    const result = await handler(Params.of(params));
    return { jsonrpc: '2.0', result, id };
  } catch (err) {
    if (err instanceof RpcError) return errorBody(id, err);
    log?.error({ err, method }, 'solana localnet: internal error');
    return errorBody(id, new RpcError(INTERNAL_ERROR, `Internal error: ${(err as Error).message}`));
  }
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** JSON-RPC 2.0 over HTTP POST (single requests and batches), plus GET /health, as a validator's RPC port serves. */
export function createRpcServer(methods: Record<string, RpcMethod>, log?: Logger): Server {
  return createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') return send(res, 200, 'ok', 'text/plain');
    if (req.method !== 'POST') return send(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain');
    void (async () => {
      const text = await readBody(req).catch(() => undefined);
      if (text === undefined) return send(res, 413, 'request too large', 'text/plain');
      let request: unknown;
      try {
        request = parseJsonWithBigInts(text);
      } catch {
        return send(res, 200, stringifyJsonWithBigInts(errorBody(null, new RpcError(PARSE_ERROR, 'Parse error'))));
      }
      const body = Array.isArray(request)
        ? request.length === 0
          ? errorBody(null, new RpcError(INVALID_REQUEST, 'Invalid request'))
          : await Promise.all(request.map((r) => answer(methods, r, log)))
        : await answer(methods, request, log);
      send(res, 200, stringifyJsonWithBigInts(body));
    })().catch((err: unknown) => {
      log?.error({ err }, 'solana localnet: request failed');
      if (!res.headersSent) send(res, 500, 'internal error', 'text/plain');
    });
  });
}
