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
