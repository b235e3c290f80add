import { EventSource } from 'eventsource';
import type { Log } from '../log.ts';

/** What `GET /solver/v1/me` answers. */
export interface SolverIdentity {
  id: string;
  name: string;
  addresses: Array<{ chain: string; address: string; proven_at: string }>;
  pairs: Array<{ source_asset: string; destination_asset: string }>;
}

/** The service refused a call of the solver API (its status and body). */
/** A firm answer to one quote request (`POST /solver/v1/quote-answers`). */
export interface QuoteAnswer {
  request_id: string;
  source_amount: string;
  destination_amount: string;
  expires_at: number;
}

/** What the service did with one answer: taken, or refused with the code a single answer would get. */
export interface AnswerOutcome {
  request_id: string;
  accepted: boolean;
  code?: string;
  error?: string;
}

export class SolverApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: the service answered ${status}: ${body.slice(0, 300)}`);
  }
}

export interface StreamHandlers {
  /** One event; its `id` (when it has one) is where the stream resumes. */
  event(type: string, data: string, id: string | undefined): void | Promise<void>;
  /** Where to resume from when the stream (re)opens; undefined: from now. */
  resumeFrom?(): string | undefined;
}

/**
 * The solver API of a Hashlock service (docs/api.md "Solver API"), as `hashlock solver` calls it with
 * its solver key: JSON calls, and Server-Sent Events streams that reopen after any failure (the
 * service restarting, a network cut) from the last event handled.
 */
export class SolverApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
    private readonly log: Log,
  ) {}

  me(): Promise<SolverIdentity> {
    return this.call('GET', '/solver/v1/me');
  }

  proveAddress(chain: string, address: string, signature: string): Promise<SolverIdentity> {
    return this.call('PUT', `/solver/v1/addresses/${encodeURIComponent(chain)}`, { address, signature });
  }

  setPairs(pairs: ReadonlyArray<{ source_asset: string; destination_asset: string }>): Promise<SolverIdentity> {
    return this.call('PUT', '/solver/v1/pairs', { pairs });
  }

  /** Answers quote requests in one call; each is taken or refused on its own. */
  answerAll(answers: readonly QuoteAnswer[]): Promise<AnswerOutcome[]> {
    return this.call('POST', '/solver/v1/quote-answers', { answers });
  }

  /**
   * Follows a stream until `signal` aborts. Events are handled one at a time, in order; a handler that
   * throws closes the stream, which reopens from the last event handled. A refusal (401 for a revoked
   * key) is logged and retried like an outage: the operator may restore the key.
   */
  follow(path: string, handlers: StreamHandlers, signal: AbortSignal, retryMs = 1_000): Promise<void> {
    return new Promise((resolve) => {
      let source: EventSource | undefined;
      let timer: NodeJS.Timeout | undefined;
      let chain: Promise<void> = Promise.resolve();
      const open = () => {
        if (signal.aborted) return;
        const from = handlers.resumeFrom?.();
        const url = new URL(path, this.baseUrl);
        if (from !== undefined) url.searchParams.set('last_event_id', from);
        const current = new EventSource(url, {
          fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, 'solver-key': this.key } }),
        });
        source = current;
        const reopen = (why: string) => {
          if (source !== current) return;
          current.close();
          source = undefined;
          if (signal.aborted) return;
          this.log.warn({ stream: path, reason: why }, 'solver API stream closed; reopening');
          timer = setTimeout(open, retryMs);
        };
        const handle = (type: string) => (message: MessageEvent) => {
          chain = chain.then(async () => {
            if (source !== current) return;
            try {
              await handlers.event(type, String(message.data), message.lastEventId || undefined);
            } catch (err) {
              reopen(`handling an event failed: ${(err as Error).message}`);
            }
          });
        };
        current.addEventListener('message', handle('message'));
        for (const type of ['ready', 'quote_request']) current.addEventListener(type, handle(type));
        current.onerror = (event) => {
          // The library reconnects by itself after a dropped connection (sending Last-Event-ID); a
          // refusal closes it for good, and this reopens it later.
          if (current.readyState === EventSource.CLOSED) reopen(`${event.message ?? 'closed'}${event.code ? ` (${event.code})` : ''}`);
        };
      };
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          source?.close();
          void chain.then(() => resolve());
        },
        { once: true },
      );
      open();
    });
  }

  private async call<T>(method: string, path: string, body?: object): Promise<T> {
    const res = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: { 'solver-key': this.key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new SolverApiError(res.status, text, `${method} ${path}`);
    return (JSON.parse(text) as { result: T }).result;
  }
}
