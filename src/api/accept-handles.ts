import { spawn } from 'node:child_process';
import { Server } from 'node:net';

/**
 * libuv accepts one connection per listening handle per turn of the event loop (libuv PR #3696, in
 * Node 20's libuv 1.46), so a service whose turns take tens of milliseconds under load lets in about
 * 30 new connections a second, however many wait in the kernel's queue: 1,000 clients opening their
 * order's event stream at once waited up to 40 s to be accepted. Node 20 has no `reusePort`.
 *
 * Each extra handle is another descriptor of the same listening socket, so every turn accepts one
 * connection per handle from the one queue. A process cannot duplicate its own descriptor from
 * JavaScript, so a short-lived child receives the server's raw handle over IPC (it never listens on
 * it) and sends it back `count` times: each copy listens here as a `net.Server` whose connections are
 * handed to `server` as its own (the HTTP server then treats them as any other: timeouts, keep-alive,
 * closing).
 *
 * Returns the copies' closer. When the child cannot run or answer, it throws, and the server is as it was.
 */
export async function addAcceptHandles(
  server: Server,
  count: number,
  options: { onError: (err: Error) => void; timeoutMs?: number },
): Promise<{ added: number; close: () => Promise<void> }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const copies: Server[] = [];
  const close = () => Promise.all(copies.map((copy) => new Promise<void>((resolve) => copy.close(() => resolve())))).then(() => undefined);
  if (count < 1) return { added: 0, close };
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // no loaders or profilers in the echo child
  const child = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no handle came back within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`the handle echo exited (${code}) after ${copies.length} of ${count} handles`)));
      child.on('message', (_message, handle) => {
        const copy = new Server();
        copy.listen(handle as unknown as { fd: number });
        copy.on('connection', (socket) => {
          socket.setNoDelay(true);
          server.emit('connection', socket);
        });
        copy.on('error', options.onError); // a failed accept (too many open files): the queue keeps the connection
        copies.push(copy);
        if (copies.length === count) {
          clearTimeout(timer);
          resolve();
        }
      });
      // The raw handle, not the server: a server would arrive listening, and the child would accept
      // (and drop, as it ends) connections of its own.
      child.send(count, (server as unknown as { _handle: Server })._handle);
    });
    return { added: copies.length, close };
  } catch (err) {
    await close();
    throw err;
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

// Sends the handle it received back `count` times; the parent ends it once it has them all (the
// listener stays, so the channel keeps the child alive while the copies wait for their turn to go).
const ECHO_CHILD = `process.on('message', (count, handle) => {
  for (let i = 0; i < count; i++) process.send('handle', handle);
});`;
