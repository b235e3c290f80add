import { sql } from 'kysely';
import { conflict } from '../errors.ts';
import { generateApiKey, hashApiKey, API_KEY_PATTERN } from './apps.ts';
import type { Db } from './database.ts';

/**
 * Solvers the operator registers to fill orders from outside the service (`hashlock solvers register`):
 * each gets a solver key, shown once and stored hashed like an app key, and proves every address it
 * registers by a signature from that address over `solverAddressMessage`.
 */
export interface RegisteredSolver {
  id: string;
  name: string;
  revoked: boolean;
  addresses: Array<{ chain: string; address: string; provenAt: string }>;
  /** The pairs it answers quote requests for: [source asset, destination asset]. */
  pairs: Array<[string, string]>;
}

/** A solver as the operator lists it: of the config or registered, and its standing. */
export interface SolverListing {
  id: string;
  name: string;
  registered: boolean;
  active: boolean;
  revoked: boolean;
  /** Why it is suspended from quoting; null when it is not. */
  suspendedReason: string | null;
  addresses: Array<{ chain: string; address: string }>;
}

/** A solver id names it in orders (`solver_id`) and in `GET /v2/liquidity`. */
export const SOLVER_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** What a solver signs to prove `address` on `chain` its own: it names the solver, so no other can reuse it. */
export function solverAddressMessage(solverId: string, chain: string, address: string): string {
  return `Hashlock solver ${solverId} controls ${address} on ${chain}`;
}

/**
 * Registers a solver and returns its key; a taken id (registered or of the config) is a conflict. It is
 * inactive (in no quote, order or liquidity listing) until it registers the pairs it serves.
 */
export async function registerSolver(db: Db, input: { id: string; name: string }): Promise<{ key: string }> {
  const key = generateApiKey();
  const inserted = await db
    .insertInto('solvers')
    .values({ id: input.id, name: input.name, is_active: false, key_hash: hashApiKey(key) })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) throw conflict(`a solver ${input.id} exists already`);
  return { key };
}

/** Revokes a registered solver's key and stops it from being matched; false when no registered solver has this id. */
export async function revokeSolver(db: Db, id: string): Promise<boolean> {
  const result = await db
    .updateTable('solvers')
    .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())`, is_active: false })
    .where('id', '=', id)
    .where('key_hash', 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The registered, unrevoked solver a key belongs to. */
export async function findSolverByKey(db: Db, key: string): Promise<RegisteredSolver | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  return registeredWhere(db, 'key_hash', hashApiKey(key), true);
}

/** A registered solver with its proven addresses and its pairs, revoked or not. */
export async function registeredSolver(db: Db, id: string): Promise<RegisteredSolver | undefined> {
  return registeredWhere(db, 'id', id, false);
}

async function registeredWhere(db: Db, column: 'id' | 'key_hash', value: string, unrevokedOnly: boolean): Promise<RegisteredSolver | undefined> {
  let query = db.selectFrom('solvers').select(['id', 'name', 'revoked_at']).where(column, '=', value).where('key_hash', 'is not', null);
  if (unrevokedOnly) query = query.where('revoked_at', 'is', null);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  const [addresses, pairs] = await Promise.all([
    db.selectFrom('solver_addresses').select(['chain', 'address', 'proven_at']).where('solver_id', '=', row.id).where('proven_at', 'is not', null).orderBy('chain').execute(),
    solverPairs(db, row.id),
  ]);
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked_at !== null,
    addresses: addresses.map((a) => ({ chain: a.chain, address: a.address, provenAt: a.proven_at! })),
    pairs,
  };
}

/** The pairs a registered solver answers quote requests for, as [source asset, destination asset]. */
export async function solverPairs(db: Db, solverId: string): Promise<Array<[string, string]>> {
  const rows = await db
    .selectFrom('solver_pairs')
    .select(['source_asset', 'destination_asset'])
    .where('solver_id', '=', solverId)
    .orderBy('source_asset')
    .orderBy('destination_asset')
    .execute();
  return rows.map((r) => [r.source_asset, r.destination_asset]);
}

/**
 * Replaces a registered solver's pairs. With pairs it is active: its balances are read and it competes
 * for quotes while connected; with none it is not.
 */
export async function setSolverPairs(db: Db, solverId: string, pairs: ReadonlyArray<readonly [string, string]>): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('solver_pairs').where('solver_id', '=', solverId).execute();
    if (pairs.length > 0) {
      await tx
        .insertInto('solver_pairs')
        .values(pairs.map(([from, to]) => ({ solver_id: solverId, source_asset: from, destination_asset: to })))
        .execute();
    }
    await tx.updateTable('solvers').set({ is_active: pairs.length > 0 }).where('id', '=', solverId).where('revoked_at', 'is', null).execute();
  });
}

/** Every solver, of the config and registered, oldest first, with its addresses (a registered solver's proven ones). */
export async function listSolvers(db: Db): Promise<SolverListing[]> {
  const rows = await db
    .selectFrom('solvers')
    .select(['id', 'name', 'is_active', 'key_hash', 'revoked_at', 'suspended_at', 'suspended_reason'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const addresses = await db.selectFrom('solver_addresses').select(['solver_id', 'chain', 'address', 'proven_at']).orderBy('chain').execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    registered: r.key_hash !== null,
    active: r.is_active,
    revoked: r.revoked_at !== null,
    suspendedReason: r.suspended_at === null ? null : (r.suspended_reason ?? 'suspended'),
    addresses: addresses.filter((a) => a.solver_id === r.id && (r.key_hash === null || a.proven_at !== null)).map((a) => ({ chain: a.chain, address: a.address })),
  }));
}

/** Records a registered solver's proven address on a chain, replacing the one it had there. */
export async function setSolverAddress(db: Db, input: { solverId: string; chain: string; address: string; proof: string }): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('solver_addresses').where('solver_id', '=', input.solverId).where('chain', '=', input.chain).execute();
    await tx
      .insertInto('solver_addresses')
      .values({ solver_id: input.solverId, chain: input.chain, address: input.address, proof: input.proof, proven_at: sql<Date>`now()` })
      .execute();
  });
}

/** The solver (configured or registered) that has `address` on `chain`, compared without case. */
export async function addressHolder(db: Db, chain: string, address: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('solver_addresses')
    .select('solver_id')
    .where('chain', '=', chain)
    .where(sql<boolean>`lower(address) = lower(${address})`)
    .executeTakeFirst();
  return row?.solver_id;
}

/**
 * The addresses on `chain` of the solvers that hold funds the service reads: every configured solver's,
 * and every unrevoked registered solver's proven one (a watcher records their wallets' outputs).
 */
export async function activeSolverAddresses(db: Db, chain: string): Promise<string[]> {
  const rows = await db
    .selectFrom('solver_addresses as a')
    .innerJoin('solvers as s', 's.id', 'a.solver_id')
    .select('a.address')
    .where('a.chain', '=', chain)
    .where('s.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('s.key_hash', 'is', null), eb('a.proven_at', 'is not', null)]))
    .execute();
  return rows.map((r) => r.address);
}
