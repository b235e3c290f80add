import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';

/**
 * Statements PostgreSQL parses once per connection instead of on every run.
 *
 * Every statement is otherwise sent unnamed, so the server parses, analyses and plans it again each
 * time. For the hot statements with many conditions and joins that costs far more than running them:
 * the solver's work statement took 11 ms a run sent unnamed and 2.5-2.9 ms named (605 orders, an idle
 * machine). A statement that starts with `prepared` is sent as a named statement (its name a hash of
 * its text): parsed once per connection, and planned as PostgreSQL's plan cache decides, for each
 * run's parameters until a plan for any parameters is estimated to cost no more.
 *
 * Only statements whose text does not vary with their inputs are marked (lists are passed as arrays,
 * `= any($1::text[])`), so each connection holds a fixed, small set; `PreparingClient` still stops
 * naming past `MAX_PER_CONNECTION` texts, so a text that did vary costs parses, never unbounded memory.
 * PGlite runs the marked statements as any other (the mark is a comment).
 */
const MARK = '/* prepared */ ';
const MAX_PER_CONNECTION = 64;

export const prepared = sql.raw(MARK);

/** A pg client that sends the marked statements as named ones. */
export class PreparingClient extends pg.Client {
  private readonly names = new Set<string>();

  // pg's query has many overloads; kysely calls query(text, values), the only form handled here.
  override query(...args: unknown[]): never {
    const [text, values] = args;
    if (typeof text === 'string' && text.startsWith(MARK) && Array.isArray(values) && args.length === 2) {
      const name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      if (this.names.has(name) || this.names.size < MAX_PER_CONNECTION) {
        this.names.add(name);
        return (super.query as unknown as (config: pg.QueryConfig) => never)({ name, text, values });
      }
    }
    return (super.query as unknown as (...a: unknown[]) => never)(...args);
  }
}
