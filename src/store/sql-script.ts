import { sql, type Kysely } from 'kysely';

/**
 * Runs a script of DDL statements one at a time (PGlite's extended protocol takes one statement per
 * query). Statements end with `;` at the end of a line; `--` comments are dropped first.
 */
export async function runStatements(db: Kysely<unknown>, script: string): Promise<void> {
  const statements = script
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const statement of statements) await sql.raw(statement).execute(db);
}
