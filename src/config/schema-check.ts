import { Ajv, type ErrorObject } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';

/** Raised when a configuration file does not match its schema; the message names the bad field. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: false, strict: false });

/** `/chains/3/assets/0/decimals` -> `chains[3].assets[0].decimals` */
export function fieldPath(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const part of parts) out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  return out === '' ? '(root)' : out;
}

export function describeSchemaError(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldPath(error.instancePath, String(params.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${fieldPath(error.instancePath, String(params.additionalProperty))}: is not a known field`;
    case 'enum':
      return `${fieldPath(error.instancePath)}: must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${fieldPath(error.instancePath)}: ${error.message ?? 'is invalid'}`;
  }
}

/** Checks `value` against `schema` and returns it typed, or throws one ConfigError naming the field. */
export function checkSchema<T extends TSchema>(schema: T, value: unknown, source: string): Static<T> {
  const validate = ajv.compile(schema);
  if (!validate(value)) {
    // In a union every branch reports; the one that got deepest into the value is the one meant.
    const deepest = (validate.errors ?? [])
      .filter((e) => e.keyword !== 'anyOf')
      .reduce<ErrorObject | undefined>((best, e) => (!best || e.instancePath.length > best.instancePath.length ? e : best), undefined);
    throw new ConfigError(`${source}: ${deepest ? describeSchemaError(deepest) : 'is invalid'}`);
  }
  return value;
}
