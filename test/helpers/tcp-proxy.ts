// A loopback TCP proxy that a test controls, in front of a real server (PostgreSQL, a chain node):
// it can cut every connection and refuse new ones for a while, then let them through again, and it
// can make the server slow, every chunk it sends (or every chunk sent to it) held back a while.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  /** Destroys every open connection and refuses new ones until `restore()`. */
  cut(): void;
  restore(): void;
  /**
   * Every chunk the server sends from now on reaches the client `ms` late, in order (so each call is
   * answered `ms` late); what the client sends goes through at once. With `requests`, it is the other
   * way: what the client sends reaches the server `ms` late (and a `cut` meanwhile drops it, so the
   * server never sees it). Open connections slow down too.
   */
  slow(ms: number, way?: 'answers' | 'requests'): void;
  /** Ends `slow`: chunks go through at once again (those already held still keep their order). */
  fast(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

/**
 * One direction of a connection: each chunk read from `from` is written to `to` once its time comes
 * (`delayMs()` after it was read, never before the chunk read before it), and `from`'s end is passed
 * on after its last chunk.
 */
function lane(from: Socket, to: Socket, delayMs: () => number) {
  const held: Array<{ at: number; chunk: Buffer | null }> = [];
  let timer: NodeJS.Timeout | undefined;
  const release = () => {
    timer = undefined;
    while (held.length > 0 && held[0]!.at <= Date.now()) {
      const { chunk } = held.shift()!;
      if (chunk) to.write(chunk);
      else to.end();
    }
    if (held.length > 0) timer = setTimeout(release, held[0]!.at - Date.now());
  };
  const hold = (chunk: Buffer | null) => {
    held.push({ at: Math.max(Date.now() + delayMs(), held.at(-1)?.at ?? 0), chunk });
    if (!timer) release();
  };
  from.on('data', (chunk: Buffer) => hold(chunk));
  from.on('end', () => hold(null));
  return {
    drop: () => {
      clearTimeout(timer);
      held.length = 0;
    },
  };
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const lanes = new Set<ReturnType<typeof lane>>();
  let down = false;
  const delay = { answers: 0, requests: 0 };
  let accepted = 0;
  // Half-open connections are allowed on both sides: each side's end is passed on by its lane, after
  // the chunks it still holds.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    if (down) return void client.destroy();
    accepted++;
    const upstream = connect({ port: target.port, host: target.host, allowHalfOpen: true });
    const ways = [lane(client, upstream, () => delay.requests), lane(upstream, client, () => delay.answers)];
    for (const way of ways) lanes.add(way);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', (hadError) => {
        open.delete(socket);
        // A reset ends the connection at once; a socket that closed after ending cleanly leaves its
        // lane to pass the end on when the chunks it holds are out.
        if (hadError || (client.destroyed && upstream.destroyed)) {
          client.destroy();
          upstream.destroy();
          for (const way of ways) {
            way.drop();
            lanes.delete(way);
          }
        }
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const destroyAll = () => {
    for (const socket of open) socket.destroy();
    for (const way of lanes) way.drop();
    lanes.clear();
  };
  return {
    port,
    through: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut: () => {
      down = true;
      destroyAll();
    },
    restore: () => {
      down = false;
    },
    slow: (ms, way = 'answers') => {
      delay[way] = ms;
    },
    fast: () => {
      delay.answers = 0;
      delay.requests = 0;
    },
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise((resolve) => {
        destroyAll();
        server.close(() => resolve());
      }),
  };
}
