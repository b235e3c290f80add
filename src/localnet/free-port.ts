import { createServer } from 'node:net';

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether nothing listens on `port` of the loopback interface. */
export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Whether `port` is free now or frees within `withinMs`: a node just stopped can hold its port a moment
 * after it counts as gone (its main thread has exited while the others still close their sockets).
 */
export async function portFreeWithin(port: number, withinMs: number): Promise<boolean> {
  for (const end = Date.now() + withinMs; ; await new Promise((r) => setTimeout(r, 50))) {
    if (await portIsFree(port)) return true;
    if (Date.now() >= end) return false;
  }
}
