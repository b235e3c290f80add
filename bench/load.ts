// Load generator run as its own process (so it does not share the server's event loop):
// `node --import tsx bench/load.ts '<json>'` prints autocannon's summary as JSON.
import autocannon from 'autocannon';

interface LoadSpec {
  url: string;
  /** Paths to rotate through, one per request. */
  paths: string[];
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  /** POST body; each `__NONCE__` in it becomes a value unique to the request. */
  bodyTemplate?: string;
  connections: number;
  durationSec: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
let i = 0;
const prefix = `${process.pid}-${Date.now()}-`;
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationSec,
  headers: { 'content-type': 'application/json', ...spec.headers },
  requests: [
    {
      method: spec.method ?? 'GET',
      setupRequest: (req) => {
        const n = i++;
        return {
          ...req,
          path: spec.paths[n % spec.paths.length]!,
          ...(spec.bodyTemplate ? { body: spec.bodyTemplate.replaceAll('__NONCE__', `${prefix}${n}`) } : {}),
        };
      },
    },
  ],
});
process.stdout.write(
  JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);
