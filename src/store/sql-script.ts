import { sql, type Kysely } from 'kysely';

/**
 * Splits a DDL script into statements: a statement ends with `;` at the end of a line outside a
 * `$$` body; whole-line `--` comments are dropped.
 */
export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBody = false;
  for (const line of script.split('\n')) {
    if (!inBody && line.trim().startsWith('--')) continue;
    current.push(line);
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inBody = !inBody;
    if (!inBody && /;\s*$/.test(line)) {
      statements.push(current.join('\n').trim().replace(/;$/, ''));
      current = [];
    }
  }
  const rest = current.join('\n').trim();
  if (rest !== '') statements.push(rest);
  return statements;
}

/** Runs a DDL script one statement at a time (PGlite's extended protocol takes one per query). */
export async function runStatements(db: Kysely<unknown>, script: string): Promise<void> {
  for (const statement of splitStatements(script)) await sql.raw(statement).execute(db);
}
