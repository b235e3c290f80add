import type { FastifyInstance } from 'fastify';
import { API_KEY_HEADER } from '../api/auth.ts';

/** An answer of the HTTP API: its status code and its JSON body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/**
 * How the MCP server reaches the HTTP API, as one app (its key): every tool is a call of the API, so
 * a tool's input is checked, priced and written exactly as the API does it.
 */
export type ApiClient = (method: 'GET' | 'POST', path: string, body?: object) => Promise<ApiAnswer>;

/** The API of a running service, over HTTP (`hashlock mcp`). */
export function httpApiClient(baseUrl: string, key: string): ApiClient {
  const base = baseUrl.replace(/\/+$/, '');
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { [API_KEY_HEADER]: key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: `the service answered ${res.status} without JSON` };
    }
    return { status: res.status, body: parsed };
  };
}

/**
 * The API of this process, in process (the service's `/mcp`): the same routes, without a socket, each
 * call marked in process (`marks`) so that it does not count against the rate limit a second time.
 */
export function injectApiClient(app: FastifyInstance, key: string, marks: Record<string, string>): ApiClient {
  return async (method, path, body) => {
    const headers = { ...marks, [API_KEY_HEADER]: key };
    const res = await app.inject({ method, url: path, headers, ...(body ? { payload: body } : {}) });
    return { status: res.statusCode, body: res.json() };
  };
}
