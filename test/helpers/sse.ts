// A Server-Sent Events client for tests and benches: node:http, parsing the stream as the
// EventSource standard does (id, event, data and comment lines; a blank line ends an event).
import { request, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
  /** performance.now() when the event's last byte arrived. */
  receivedAt: number;
}

export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  closed = false;
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(
    readonly response: IncomingMessage,
    private readonly abort: AbortController,
    private readonly onEvent?: (event: SseEvent) => void,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.parse(chunk));
    response.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  /** Opens a stream; resolves once the response headers are in, with the status to check. */
  static open(url: string, headers: Record<string, string> = {}, onEvent?: (event: SseEvent) => void): Promise<SseClient> {
    const abort = new AbortController();
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal }, (res) =>
        resolve(new SseClient(res, abort, onEvent)),
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** The body of a non-stream answer (an error envelope). */
  async text(): Promise<string> {
    await this.until(() => this.closed, 10_000, 'the response to end');
    return this.buffer;
  }

  /** The parsed `data` of every event so far. */
  data<T = { id: string; status: string; order_id: string; order: Record<string, unknown> }>(): T[] {
    return this.events.map((e) => JSON.parse(e.data) as T);
  }

  /** Waits until `done()` holds (checked on every event and at close). */
  async until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; events: ${this.events.map((e) => e.data.slice(0, 120)).join('\n')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1_000));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
    this.response.destroy();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private parse(chunk: string): void {
    if (this.response.statusCode !== 200) {
      this.buffer += chunk;
      return;
    }
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let id: string | undefined;
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length === 0) continue;
      const parsed = { id, event, data: data.join('\n'), receivedAt: performance.now() };
      this.events.push(parsed);
      this.onEvent?.(parsed);
    }
    this.notify();
  }
}
