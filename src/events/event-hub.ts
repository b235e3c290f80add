import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, invalid } from '../errors.ts';
import { SERIAL_ID, type Db, type Store } from '../store/database.ts';
import { eventsAfter, latestEventId } from '../store/order-events.ts';
import { eventJson, ORDER_EVENT_CHANNEL, type OrderEvent } from './order-event.ts';

/** Which events a stream carries. */
export type StreamScope =
  /** One order's: its whole history first (or what follows `Last-Event-ID`), then each new one. */
  | { orderId: string }
  /** The app's orders' new events (after `Last-Event-ID` when given), those `accept` lets through. */
  | { appId: string; accept?: (event: OrderEvent) => boolean | Promise<boolean> }
  /** The events of the orders matched to a solver: new ones, or those after `Last-Event-ID`. */
  | { solverId: string }
  /** Every order's new events (after `Last-Event-ID` when given). */
  | { all: true };

/** A public stream needs no API key (the explorer's); it counts against its client address's cap. */
export interface StreamAccess {
  public?: boolean;
}

export interface EventHubOptions {
  /** How often an idle stream gets a comment line, so proxies keep it open. */
  heartbeatMs?: number;
  /** Open streams this instance accepts; more get 503. */
  maxStreams?: number;
  /** Open public streams (no API key: the explorer's) one client address may hold here; more get 429. */
  maxPublicStreamsPerAddress?: number;
  /** A stream whose client has not read this much is closed (it resumes with Last-Event-ID). */
  maxUnreadBytes?: number;
  log?: FastifyBaseLogger;
}

const PAGE = 500;
/** How often the log is read even without a notification (a lost one only delays an event). */
const SAFETY_PULL_MS = 5_000;

class Stream {
  lastSent = 0n;
  /** Live events that arrive while the backlog is written; null once it is. */
  held: OrderEvent[] | null = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly res: ServerResponse,
    readonly scope: StreamScope,
    private readonly maxUnreadBytes: number,
    /** The client address a public stream counts against; undefined for a keyed one. */
    readonly publicAddress: string | undefined,
  ) {}

  /** Sends events in order, each once, through the scope's filter. */
  send(event: OrderEvent, frame: Buffer): void {
    const accept = 'appId' in this.scope ? this.scope.accept : undefined;
    if (!accept) return this.write(event, frame);
    this.queue = this.queue.then(async () => {
      try {
        if (await accept(event)) this.write(event, frame);
      } catch {
        // The filter could not be asked (the database is away, the service is stopping): end the
        // stream rather than skip the event; the client resumes from its Last-Event-ID.
        this.res.destroy();
      }
    });
  }

  write(event: OrderEvent, frame: Buffer): void {
    const id = BigInt(event.id);
    if (id <= this.lastSent || this.res.destroyed) return;
    this.lastSent = id;
    this.res.write(frame);
    if (this.res.writableLength > this.maxUnreadBytes) this.res.destroy();
  }

  settled(): Promise<void> {
    return this.queue;
  }
}

/** Takes the reply over as a Server-Sent Events stream: its headers (no proxy buffering) and a 2 s reconnect delay. */
export function openEventStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  res.write('retry: 2000\n\n');
  return res;
}

/** The SSE frame of an event, encoded once however many streams carry it. */
const frames = new WeakMap<OrderEvent, Buffer>();
function frameOf(event: OrderEvent): Buffer {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = Buffer.from(`id: ${event.id}\ndata: ${eventJson(event)}\n\n`);
    frames.set(event, frame);
  }
  return frame;
}

/**
 * Serves order events as Server-Sent Events. The hub follows the event log (src/events/order-recorder.ts
 * appends it, from whichever instance): each `order_event` notification makes it read the new events
 * once, and it hands each to the streams that want it. A stream resumes from `Last-Event-ID`
 * because the log keeps every event.
 */
export class EventHub {
  private lastId = 0n;
  private readonly streams = new Set<Stream>();
  private readonly byOrder = new Map<string, Set<Stream>>();
  private readonly byApp = new Map<string, Set<Stream>>();
  private readonly bySolver = new Map<string, Set<Stream>>();
  private readonly everyOrder = new Set<Stream>();
  /** Long-polls of one order (GET /v3/orders/{id}?wait=), woken by its next event. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private pulling: Promise<void> | undefined;
  private pullAgain = false;
  private readonly heartbeatMs: number;
  private readonly maxStreams: number;
  private readonly maxPublicPerAddress: number;
  private readonly publicByAddress = new Map<string, Set<Stream>>();
  private readonly maxUnreadBytes: number;

  constructor(
    private readonly db: Db,
    private readonly options: EventHubOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxStreams = options.maxStreams ?? 10_000;
    this.maxPublicPerAddress = options.maxPublicStreamsPerAddress ?? 50;
    this.maxUnreadBytes = options.maxUnreadBytes ?? 1024 * 1024;
  }

  /** Follows the log from its current end; returns the function that stops it and ends every stream. */
  async start(store: Store): Promise<() => Promise<void>> {
    this.lastId = BigInt(await latestEventId(this.db));
    const unlisten = await store.listen(ORDER_EVENT_CHANNEL, {
      message: () => this.pull(),
      connected: (isConnected) => {
        if (isConnected) this.pull();
      },
    });
    const heartbeat = setInterval(() => {
      for (const stream of this.streams) if (!stream.res.destroyed) stream.res.write(': heartbeat\n\n');
    }, this.heartbeatMs);
    const safety = setInterval(() => this.pull(), SAFETY_PULL_MS);
    heartbeat.unref();
    safety.unref();
    return async () => {
      clearInterval(heartbeat);
      clearInterval(safety);
      await unlisten();
      for (const stream of this.streams) stream.res.end();
      await this.pulling;
    };
  }

  /**
   * Resolves true at the next event of `orderId` this instance hears (or `wake`), false after
   * `timeoutMs` or once `signal` aborts. Registered before it returns, so nothing recorded after the
   * call is missed.
   */
  nextEventOf(orderId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const set = setOf(this.waiters, orderId);
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        unsetOf(this.waiters, orderId, wake);
        resolve(changed);
      };
      const wake = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      set.add(wake);
      if (signal?.aborted) return done(false);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  /** Wakes this instance's long-polls of `orderId` (a change that records no event: a reported deposit). */
  wake(orderId: string): void {
    for (const wake of [...(this.waiters.get(orderId) ?? [])]) wake();
  }

  /** Open streams on this instance. */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Answers the request with a stream of `scope`'s events. `Last-Event-ID` (header, or the
   * `last_event_id` query parameter for clients that cannot set headers) resumes after that event.
   */
  async serveStream(request: FastifyRequest, reply: FastifyReply, scope: StreamScope, access: StreamAccess = {}): Promise<void> {
    // "New events" start at the log's end as the stream opens for the client, before its headers are
    // sent: an event recorded once the client saw the stream open must reach it.
    const lastEventId = lastEventIdOf(request) ?? ('orderId' in scope ? undefined : await latestEventId(this.db));
    if (this.streams.size >= this.maxStreams) throw new AppError('unavailable', 'too many open event streams on this instance; retry later');
    const address = access.public ? request.ip : undefined;
    if (address !== undefined && (this.publicByAddress.get(address)?.size ?? 0) >= this.maxPublicPerAddress) {
      throw new AppError('rate_limited', `too many open event streams from ${address} (at most ${this.maxPublicPerAddress}); close one first`);
    }
    const res = openEventStream(reply);
    const stream = new Stream(res, scope, this.maxUnreadBytes, address);
    this.add(stream);
    res.on('close', () => this.remove(stream));
    // A client gone before the stream opened has already had its 'close'.
    if (res.destroyed || request.raw.socket.destroyed) this.remove(stream);
    try {
      await this.sendBacklog(stream, lastEventId);
    } catch (err) {
      this.options.log?.warn({ err }, 'reading an event stream backlog failed');
      res.destroy();
      return;
    }
    const held = stream.held ?? [];
    stream.held = null;
    for (const event of held) stream.send(event, frameOf(event));
  }

  private async sendBacklog(stream: Stream, lastEventId: string | undefined): Promise<void> {
    const scope = stream.scope;
    if (lastEventId !== undefined) stream.lastSent = BigInt(lastEventId);
    let afterId = lastEventId ?? '0';
    for (;;) {
      const events = await eventsAfter(this.db, {
        afterId,
        limit: PAGE,
        ...('orderId' in scope ? { orderId: scope.orderId } : {}),
        ...('appId' in scope ? { appId: scope.appId } : {}),
        ...('solverId' in scope ? { solverId: scope.solverId } : {}),
      });
      for (const event of events) stream.send(event, frameOf(event));
      await stream.settled();
      if (events.length < PAGE || stream.res.destroyed) return;
      afterId = events.at(-1)!.id;
    }
  }

  private add(stream: Stream): void {
    this.streams.add(stream);
    const scope = stream.scope;
    if ('orderId' in scope) setOf(this.byOrder, scope.orderId).add(stream);
    else if ('appId' in scope) setOf(this.byApp, scope.appId).add(stream);
    else if ('solverId' in scope) setOf(this.bySolver, scope.solverId).add(stream);
    else this.everyOrder.add(stream);
    if (stream.publicAddress !== undefined) setOf(this.publicByAddress, stream.publicAddress).add(stream);
  }

  /** Forgets a stream; once, however often its end is heard. */
  private remove(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    const scope = stream.scope;
    if ('orderId' in scope) unsetOf(this.byOrder, scope.orderId, stream);
    else if ('appId' in scope) unsetOf(this.byApp, scope.appId, stream);
    else if ('solverId' in scope) unsetOf(this.bySolver, scope.solverId, stream);
    else this.everyOrder.delete(stream);
    if (stream.publicAddress !== undefined) unsetOf(this.publicByAddress, stream.publicAddress, stream);
  }

  /** Reads the events recorded since the last read and hands them out; notifications coalesce. */
  private pull(): void {
    if (this.pulling) {
      this.pullAgain = true;
      return;
    }
    this.pulling = (async () => {
      do {
        this.pullAgain = false;
        for (;;) {
          const events = await eventsAfter(this.db, { afterId: this.lastId.toString(), limit: PAGE });
          if (events.length === 0) break;
          this.lastId = BigInt(events.at(-1)!.id);
          for (const event of events) this.dispatch(event);
          if (events.length < PAGE) break;
        }
      } while (this.pullAgain);
    })()
      .catch((err: unknown) => this.options.log?.warn({ err }, 'reading new order events failed; the next notification retries'))
      .finally(() => {
        this.pulling = undefined;
      });
  }

  private dispatch(event: OrderEvent): void {
    const frame = frameOf(event);
    const deliver = (stream: Stream) => {
      if (stream.held) stream.held.push(event);
      else stream.send(event, frame);
    };
    this.byOrder.get(event.orderId)?.forEach(deliver);
    this.byApp.get(event.appId)?.forEach(deliver);
    this.bySolver.get(event.solverId)?.forEach(deliver);
    this.everyOrder.forEach(deliver);
    this.wake(event.orderId);
  }
}

function lastEventIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  const query = (request.query as { last_event_id?: unknown } | undefined)?.last_event_id;
  const [name, value] = header !== undefined ? ['Last-Event-ID header', header] : ['last_event_id', query];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !SERIAL_ID.test(value)) throw invalid(`invalid ${name}: must be an event id (digits)`);
  return value;
}

function setOf<K, V>(map: Map<K, Set<V>>, key: K): Set<V> {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  return set;
}

function unsetOf<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
