/**
 * Resolves with `probe`'s first answer other than `undefined`, asking every `everyMs`; fails after
 * `timeoutMs`, naming `what`.
 */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resolves once `check` holds, polling; fails after `timeoutMs`, naming `what`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'the condition'): Promise<void> {
  await until(what, async () => ((await check()) ? true : undefined), timeoutMs);
}

/**
 * Resolves once the service at `apiUrl` has completed `passes` more solver passes (its /metrics'
 * `hashlock_worker_pass_seconds_count` of the solver's worker) than when called: at least one of them
 * began after the call, on what the orders are now. For a test that shows the solver did not act.
 */
export async function solverPassesFrom(apiUrl: string, passes = 2, timeoutMs = 30_000): Promise<void> {
  const count = async () => {
    const text = await (await fetch(`${apiUrl}/metrics`)).text();
    const found = [...text.matchAll(/^hashlock_worker_pass_seconds_count\{worker="solver:[^"]*"\} (\d+)$/gm)];
    if (found.length === 0) throw new Error(`${apiUrl}/metrics shows no solver pass`);
    return found.reduce((sum, m) => sum + Number(m[1]), 0);
  };
  const from = await count();
  await until(`${passes} solver passes`, async () => ((await count()) >= from + passes ? true : undefined), timeoutMs, 100);
}
