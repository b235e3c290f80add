import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * A job written with its signed transaction (a Bitcoin-family transaction is complete once signed),
 * which the queue only broadcasts, has the payload kind `signed`, named for what the queue does with
 * it rather than for a chain family. Jobs written before were `bitcoin`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, `update relayer_jobs set payload = jsonb_set(payload, '{kind}', '"signed"') where payload->>'kind' = 'bitcoin'`);
}
