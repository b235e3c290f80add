/**
 * What the service's parts log through; pino's logger (Fastify's `app.log`) fits it. Fields carry ids,
 * hashes, amounts and short errors, never payloads, keys or secrets (safety rule 7).
 */
export interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A `Log` that makes children carrying fixed fields (a chain, a worker). */
export interface ParentLog extends Log {
  child(bindings: Record<string, unknown>): ParentLog;
}

/** Logs nothing: for the parts a test runs without a logger. */
export const silentLog: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
