// The clients of the event-stream bench, in a process of their own so that they do not share the
// service's event loop: opens the streams it is given, says "ready", records when each event
// arrives (wall clock, ms), and on "report" on stdin prints every receipt as one JSON line. Kept
// cheap per event (bytes are scanned for the event's head, not decoded or parsed) so that a
// thousand of them on the service's machine measure the service, not themselves.
import { request } from 'node:http';
import { createInterface } from 'node:readline';

const spec = JSON.parse(process.argv[2]!) as { urls: string[]; headers: Record<string, string> };
const receipts: Array<[number, string, string, number]> = [];
// The event's own head; the order body inside it has an "order_id" key too, never after this type.
const ORDER_ID = Buffer.from('"type":"order.status","order_id":"');
const STATUS = Buffer.from('","status":"');
const QUOTE = '"'.charCodeAt(0);
const aborts: AbortController[] = [];

function open(url: string, client: number): Promise<number> {
  const abort = new AbortController();
  aborts.push(abort);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...spec.headers }, signal: abort.signal }, (res) => {
      resolve(res.statusCode ?? 0);
      res.on('data', (chunk: Buffer) => {
        const at = performance.timeOrigin + performance.now();
        // A chunk may hold several events (or a heartbeat); each event's data starts with its head.
        for (let from = chunk.indexOf(ORDER_ID); from >= 0; from = chunk.indexOf(ORDER_ID, from + 1)) {
          const idStart = from + ORDER_ID.length;
          const idEnd = chunk.indexOf(STATUS, idStart);
          if (idEnd < 0) break;
          const statusStart = idEnd + STATUS.length;
          const statusEnd = chunk.indexOf(QUOTE, statusStart);
          receipts.push([client, chunk.toString('latin1', idStart, idEnd), chunk.toString('latin1', statusStart, statusEnd), at]);
          from = statusEnd;
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const statuses: number[] = [];
for (let i = 0; i < spec.urls.length; i += 100) statuses.push(...(await Promise.all(spec.urls.slice(i, i + 100).map((url, j) => open(url, i + j)))));
if (statuses.some((s) => s !== 200)) throw new Error(`a stream was refused: ${statuses.find((s) => s !== 200)}`);
console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'report') {
    console.log(JSON.stringify(receipts));
    receipts.length = 0;
  }
  if (line === 'exit') break;
}
for (const a of aborts) a.abort();
process.exit(0);
