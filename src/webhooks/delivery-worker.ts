import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { systemClock, type Clock } from '../clock.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import { retryWhileUnreachable, type Db, type Store } from '../store/database.ts';
import {
  claimDeliveries,
  findEndpoint,
  markDelivered,
  markFailed,
  pruneDeliveries,
  releaseDelivery,
  stopPendingDeliveries,
  WEBHOOK_QUEUED_CHANNEL,
  type AttemptOutcome,
  type ClaimedDelivery,
} from '../store/webhooks.ts';
import { VERSION } from '../version.ts';
import { privateHostProblem, publicOnlyLookup } from './addresses.ts';
import { ATTEMPT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from './signature.ts';
import { silentLog, type Log } from '../log.ts';

export interface WebhookWorkerOptions {
  db: Db;
  secrets: SecretBox;
  /** This worker's name in the deliveries it leases (unique per instance). */
  worker: string;
  /** How long an endpoint has to answer (default 10 s). */
  timeoutMs?: number;
  /** A claimed delivery's lease outlives the request timeout by this much (default 30 s). */
  leaseMarginMs?: number;
  /** Requests in flight at once, in all (default 64) and per endpoint, across instances (default 4). */
  maxInFlight?: number;
  perEndpoint?: number;
  /** The fallback poll for due deliveries (retries, a missed notification); default 1 s. */
  pollMs?: number;
  /** Retries: the first after `firstMs` (default 10 s), doubling to `maxMs` (1 h), with jitter. */
  firstRetryMs?: number;
  maxRetryMs?: number;
  /** A delivery not done this long after it was queued fails for good (default 24 h). */
  giveUpMs?: number;
  /** An endpoint that has failed this long without a success is disabled (default 24 h). */
  disableAfterMs?: number;
  /** Whether endpoints may be on loopback, private or link-local addresses (default: refused). */
  allowPrivateAddresses?: boolean;
  /** How long the delivery log keeps a delivery after it ended (default 30 days). */
  keepDeliveriesMs?: number;
  /** How often ended deliveries past `keepDeliveriesMs` are deleted (default hourly, and at start). */
  pruneEveryMs?: number;
  /** The time retries, giving up and disabling count by (default: the system clock). */
  clock?: Clock;
  log?: Log;
}


/** The delay before attempt `attempt + 1`: `first * 2^(attempt-1)`, at most `max`, times 0.8 to 1.2. */
export function retryDelayMs(attempt: number, firstMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(firstMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40), maxMs);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * Sends the webhook outbox's deliveries; one runs on every instance. It claims due deliveries (SKIP
 * LOCKED, each leased for longer than the request timeout, so no two workers send one at once) as
 * request slots free up, never waiting for a batch to finish, and sends each on its own: a slow
 * endpoint holds only its own slots (`perEndpoint`). 2xx delivers; anything else, or no answer in
 * time, is retried with exponential backoff until `giveUpMs`. Redirects are not followed.
 */
export class WebhookDeliveryWorker {
  private readonly db: Db;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly maxInFlight: number;
  private readonly perEndpoint: number;
  private readonly firstRetryMs: number;
  private readonly maxRetryMs: number;
  private readonly giveUpMs: number;
  private readonly disableAfterMs: number;
  private readonly log: Log;
  private readonly clock: Clock;
  private readonly allowPrivateAddresses: boolean;
  private readonly stopping = new AbortController();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly poll: NodeJS.Timeout;
  private readonly pruneTimer: NodeJS.Timeout;
  private pruning: Promise<void> = Promise.resolve();
  private stopped = false;
  private pumping = false;
  private again = false;
  private pumped: Promise<void> = Promise.resolve();

  constructor(private readonly options: WebhookWorkerOptions) {
    this.db = options.db;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseMs = this.timeoutMs + (options.leaseMarginMs ?? 30_000);
    this.maxInFlight = options.maxInFlight ?? 64;
    this.perEndpoint = options.perEndpoint ?? 4;
    this.firstRetryMs = options.firstRetryMs ?? 10_000;
    this.maxRetryMs = options.maxRetryMs ?? 3_600_000;
    this.giveUpMs = options.giveUpMs ?? 86_400_000;
    this.disableAfterMs = options.disableAfterMs ?? 86_400_000;
    this.log = options.log ?? silentLog;
    this.clock = options.clock ?? systemClock;
    this.allowPrivateAddresses = options.allowPrivateAddresses ?? false;
    this.poll = setInterval(() => this.wake(), options.pollMs ?? 1_000);
    this.poll.unref();
    this.pruneTimer = setInterval(() => void this.prune(), options.pruneEveryMs ?? 3_600_000);
    this.pruneTimer.unref();
    this.wake();
    void this.prune();
  }

  /** Deletes the delivery log's ended deliveries older than `keepDeliveriesMs`; one pass at a time. */
  prune(): Promise<void> {
    this.pruning = this.pruning.then(async () => {
      if (this.stopped) return;
      try {
        await pruneDeliveries(this.db, this.options.keepDeliveriesMs ?? 30 * 86_400_000);
      } catch (err) {
        if (!this.stopped) this.log.error({ err }, 'deleting old webhook deliveries failed');
      }
    });
    return this.pruning;
  }

  /** Looks for due deliveries now (a delivery was queued, or a request slot freed up). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.pumped = this.pump();
  }

  /** Stops claiming, aborts the requests in flight (their deliveries are due again at once) and waits for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poll);
    clearInterval(this.pruneTimer);
    this.stopping.abort();
    await this.pumped;
    await this.pruning;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Claims while there are free slots and due deliveries; wakes during a pass make it go round again. */
  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        while (!this.stopped && this.inFlight.size < this.maxInFlight) {
          const room = this.maxInFlight - this.inFlight.size;
          const claimed = await claimDeliveries(this.db, {
            worker: this.options.worker,
            leaseMs: this.leaseMs,
            limit: room,
            perEndpoint: this.perEndpoint,
            now: this.clock.now(),
          });
          for (const delivery of claimed) this.start(delivery);
          if (claimed.length < room) break;
        }
      } while (this.again && !this.stopped);
    } catch (err) {
      if (!this.stopped) this.log.error({ err }, 'claiming webhook deliveries failed');
    } finally {
      this.pumping = false;
    }
  }

  private start(delivery: ClaimedDelivery): void {
    const task = this.deliver(delivery, Date.now() + this.leaseMs)
      .catch((err: unknown) => {
        if (!this.stopped) this.log.error({ err, delivery: delivery.id }, 'recording a webhook delivery failed');
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        this.wake();
      });
    this.inFlight.set(delivery.id, task);
  }

  /**
   * Sends a delivery and records the outcome. An outcome the database cannot take for the moment is
   * written again until the delivery's lease ends (each write is a no-op once one went through), so
   * a lost connection does not make a delivered webhook go out a second time.
   */
  private async deliver(delivery: ClaimedDelivery, leaseEnds: number): Promise<void> {
    const secret = Buffer.from(this.options.secrets.open(delivery.secretCiphertext)).toString('utf8');
    const startedAt = new Date();
    const outcome = await this.post(delivery, secret);
    const record = <T>(write: () => Promise<T>) => retryWhileUnreachable(write, { deadline: leaseEnds, signal: this.stopping.signal });
    if (outcome === 'stopped') return record(() => releaseDelivery(this.db, delivery.id, this.options.worker));
    const recorded: AttemptOutcome = { ...outcome, startedAt, durationMs: Date.now() - startedAt.getTime() };
    if (outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300) {
      await record(() => markDelivered(this.db, delivery.id, this.options.worker, recorded));
      return;
    }
    const result = await record(() =>
      markFailed(this.db, delivery.id, this.options.worker, recorded, {
        retryMs: retryDelayMs(delivery.attempt, this.firstRetryMs, this.maxRetryMs),
        giveUpMs: this.giveUpMs,
        disableAfterMs: this.disableAfterMs,
      }, this.clock.now()),
    );
    if (result?.status === 'failed') this.log.warn({ delivery: delivery.id, endpoint: delivery.endpointId, error: outcome.error }, 'webhook delivery given up');
    if (result?.disabled) {
      const endpoint = await findEndpoint(this.db, result.endpointId);
      const stoppedCount = await stopPendingDeliveries(this.db, result.endpointId, `endpoint disabled: ${endpoint?.disabledReason ?? ''}`);
      this.log.warn({ endpoint: result.endpointId, reason: endpoint?.disabledReason, stopped: stoppedCount }, 'webhook endpoint disabled');
    }
  }

  /** One POST: its status code, or why none came; 'stopped' when the worker's stop cut it short. */
  private async post(delivery: ClaimedDelivery, secret: string): Promise<{ statusCode: number | null; error: string } | 'stopped'> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const url = new URL(delivery.url);
    const refused = this.allowPrivateAddresses ? undefined : privateHostProblem(url);
    if (refused) return { statusCode: null, error: `refused: ${refused} (webhooks.allow_private_addresses is off)` };
    try {
      const status = await postJson(url, delivery.body, {
        signal: AbortSignal.any([timeout, this.stopping.signal]),
        ...(this.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }),
        headers: {
          'user-agent': `Hashlock-Webhooks/${VERSION}`,
          [SIGNATURE_HEADER]: signWebhook(secret, delivery.body),
          [EVENT_ID_HEADER]: delivery.eventId,
          [ATTEMPT_HEADER]: String(delivery.attempt),
        },
      });
      if (status >= 200 && status < 300) return { statusCode: status, error: '' };
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      return { statusCode: status, error: `HTTP ${status}${redirect}` };
    } catch (err) {
      if (this.stopping.signal.aborted) return 'stopped';
      if (timeout.aborted) return { statusCode: null, error: `no answer within ${this.timeoutMs} ms` };
      const code = (err as { code?: string }).code;
      const text = code === 'EPRIVATEADDRESS' ? `refused: ${(err as Error).message}` : `request failed: ${code ?? (err as Error).message}`;
      return { statusCode: null, error: text.slice(0, 300) };
    }
  }
}

/**
 * One POST of a JSON body; resolves with the status code once the answer's head is in (its body is
 * read and dropped). node:http rather than fetch, for its `lookup` hook: the address connected to is
 * the one checked. Redirects are never followed.
 */
function postJson(
  url: URL,
  body: string,
  options: { signal: AbortSignal; lookup?: LookupFunction; headers: Record<string, string> },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        signal: options.signal,
        ...(options.lookup ? { lookup: options.lookup } : {}),
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...options.headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs a delivery worker, woken by `webhook_queued` from any instance; returns its stop. */
export async function startWebhookDelivery(store: Store, options: Omit<WebhookWorkerOptions, 'db'>): Promise<() => Promise<void>> {
  const worker = new WebhookDeliveryWorker({ ...options, db: store.db });
  const unlisten = await store.listen(WEBHOOK_QUEUED_CHANNEL, {
    message: () => worker.wake(),
    // Whatever was queued while the listener was down is found now.
    connected: (connected) => connected && worker.wake(),
  });
  return async () => {
    await unlisten();
    await worker.stop();
  };
}
