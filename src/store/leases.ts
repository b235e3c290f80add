import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Takes or renews the lease `name` for `holder` for `ttlMs`. Returns true while `holder` has it:
 * another holder gets it only after the lease has expired, so one instance runs each worker.
 */
export async function acquireLease(db: Db, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const expires = sql<string>`now() + ${`${ttlMs} milliseconds`}::interval`;
  const row = await db
    .insertInto('worker_leases')
    .values({ name, holder, expires_at: expires })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, expires_at: expires })
        .where((eb) =>
          eb.or([eb('worker_leases.holder', '=', holder), eb('worker_leases.expires_at', '<', sql<string>`now()`)]),
        ),
    )
    .returning('holder')
    .executeTakeFirst();
  return row?.holder === holder;
}

/**
 * Renews, for `holder`, those of `names` it still holds, for `ttlMs`, in one statement; returns the
 * names renewed (a lease another holder took is not among them).
 */
export async function renewLeases(db: Db, names: readonly string[], holder: string, ttlMs: number): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await sql<{ name: string }>`
    update worker_leases set expires_at = now() + ${`${ttlMs} milliseconds`}::interval
    where holder = ${holder} and name in (${sql.join(names.map((n) => sql`${n}`))})
    returning name
  `.execute(db);
  return new Set(rows.map((r) => r.name));
}

export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await db.deleteFrom('worker_leases').where('name', '=', name).where('holder', '=', holder).execute();
}

/** Whether some instance holds the lease `name` now: the worker it names is running somewhere. */
export async function leaseIsHeld(db: Db, name: string): Promise<boolean> {
  const row = await db.selectFrom('worker_leases').select('holder').where('name', '=', name).where('expires_at', '>', sql<string>`now()`).executeTakeFirst();
  return row !== undefined;
}

/** The lease a solver's passes run under (`startSolverLoop`). */
export const solverLeaseName = (solverId: string): string => `solver:${solverId}`;
