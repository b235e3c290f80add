// A loopback HTTP proxy in front of a real node's JSON-RPC that a test can make answer as a failing
// provider does: one HTTP status (429 rate-limited, 503 unavailable, 502 from a gateway) to every
// request, until it is told to pass them through again.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';

export interface HttpFaultProxy {
  /** The node's URL with its host and port replaced by the proxy's. */
  url: string;
  /** Answers every request with `status` (undefined: passes them to the node again). */
  answer(status: number | undefined): void;
  /** Requests answered with a fault so far. */
  readonly faults: number;
  close(): Promise<void>;
}

const REASONS: Readonly<Record<number, string>> = { 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable' };

export async function startHttpFaultProxy(nodeUrl: string): Promise<HttpFaultProxy> {
  const target = new URL(nodeUrl);
  let status: number | undefined;
  let faults = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (status !== undefined) {
      faults++;
      // Drain the body first, as a real gateway would, so the client sees an answer and not a reset.
      req.resume();
      req.on('end', () => {
        res.writeHead(status!, { 'content-type': 'text/plain', ...(status === 429 ? { 'retry-after': '1' } : {}) });
        res.end(REASONS[status!] ?? 'error');
      });
      return;
    }
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(nodeUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    answer: (s) => {
      status = s;
    },
    get faults() {
      return faults;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Has the proxy answer each of `statuses` in turn for `passes` passes of `pass` (a worker's tick), each
 * status met at least once, then lets calls through again.
 */
export async function throughFaults(proxy: HttpFaultProxy, statuses: readonly number[], pass: () => Promise<unknown>, passes = 4): Promise<void> {
  try {
    for (const status of statuses) {
      proxy.answer(status);
      const before = proxy.faults;
      for (let i = 0; i < passes; i++) {
        await pass();
        await new Promise((r) => setTimeout(r, 15));
      }
      assert.ok(proxy.faults > before, `the worker met ${status}`);
    }
  } finally {
    proxy.answer(undefined);
  }
}
