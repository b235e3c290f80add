import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/** An app's own request limit (`hashlock apps create --rate-limit`, `apps rate-limit`); none: the config's per-key limit. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table apps add column rate_limit_max integer, add column rate_limit_window_ms integer;
    alter table apps add constraint apps_rate_limit_whole check (
      (rate_limit_max is null and rate_limit_window_ms is null)
      or (rate_limit_max > 0 and rate_limit_window_ms > 0)
    );
    `,
  );
}
