import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from './database.ts';

/** At most `max` requests per `windowMs`. */
export interface RequestLimit {
  max: number;
  windowMs: number;
}

export interface App {
  id: string;
  name: string;
  gasless: boolean;
  defaultSlippage: number;
  /** The app's own request limit; absent: the config's per-key limit. */
  rateLimit?: RequestLimit;
}

/** API keys are 32 random bytes as 64 lowercase hex characters, the form clients of this API check. */
export const API_KEY_PATTERN = /^[0-9a-f]{64}$/;

export function generateApiKey(): string {
  return randomBytes(32).toString('hex');
}

/** Keys are stored only as their SHA-256; a key has 256 bits of entropy, so no slow hash is needed. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export async function createApp(
  db: Db,
  input: { name: string; gasless?: boolean; defaultSlippage?: number; rateLimit?: RequestLimit },
): Promise<{ app: App; key: string }> {
  const key = generateApiKey();
  const app: App = {
    id: randomUUID(),
    name: input.name,
    gasless: input.gasless ?? false,
    defaultSlippage: input.defaultSlippage ?? 0,
    ...(input.rateLimit ? { rateLimit: input.rateLimit } : {}),
  };
  await db
    .insertInto('apps')
    .values({
      id: app.id,
      name: app.name,
      key_hash: hashApiKey(key),
      gasless: app.gasless,
      default_slippage: app.defaultSlippage,
      rate_limit_max: app.rateLimit?.max ?? null,
      rate_limit_window_ms: app.rateLimit?.windowMs ?? null,
    })
    .execute();
  return { app, key };
}

/** Gives the app its own request limit, or (`null`) the config's again; false when no such app exists. */
export async function setAppRateLimit(db: Db, id: string, limit: RequestLimit | null): Promise<boolean> {
  const result = await db
    .updateTable('apps')
    .set({ rate_limit_max: limit?.max ?? null, rate_limit_window_ms: limit?.windowMs ?? null })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function findAppByKey(db: Db, key: string): Promise<App | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  const row = await db
    .selectFrom('apps')
    .select(['id', 'name', 'gasless', 'default_slippage', 'rate_limit_max', 'rate_limit_window_ms'])
    .where('key_hash', '=', hashApiKey(key))
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const app: App = { id: row.id, name: row.name, gasless: row.gasless, defaultSlippage: row.default_slippage };
  if (row.rate_limit_max !== null && row.rate_limit_window_ms !== null) app.rateLimit = { max: row.rate_limit_max, windowMs: row.rate_limit_window_ms };
  return app;
}

/** Whether an app of this id exists (disabled or not). */
export async function appExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('apps').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
