import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from './database.ts';

export interface App {
  id: string;
  name: string;
  gasless: boolean;
  defaultSlippage: number;
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
  input: { name: string; gasless?: boolean; defaultSlippage?: number },
): Promise<{ app: App; key: string }> {
  const key = generateApiKey();
  const app: App = {
    id: randomUUID(),
    name: input.name,
    gasless: input.gasless ?? false,
    defaultSlippage: input.defaultSlippage ?? 0,
  };
  await db
    .insertInto('apps')
    .values({
      id: app.id,
      name: app.name,
      key_hash: hashApiKey(key),
      gasless: app.gasless,
      default_slippage: app.defaultSlippage,
    })
    .execute();
  return { app, key };
}

export async function findAppByKey(db: Db, key: string): Promise<App | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  const row = await db
    .selectFrom('apps')
    .select(['id', 'name', 'gasless', 'default_slippage'])
    .where('key_hash', '=', hashApiKey(key))
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return row && { id: row.id, name: row.name, gasless: row.gasless, defaultSlippage: row.default_slippage };
}

/** Whether an app of this id exists (disabled or not). */
export async function appExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('apps').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
