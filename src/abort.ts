/**
 * Settles as `promise` does, or rejects with the signal's reason as soon as `signal` aborts: a wait
 * that shutdown should not sit out (a receipt on a chain that may never answer). The promise itself
 * runs on; its late outcome is dropped, never left as an unhandled rejection.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}
