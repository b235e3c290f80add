import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import { AppError, invalid } from '../errors.ts';
import type { OrderRecord } from '../store/orders.ts';
import type { RelayerJob } from '../store/relayer-jobs.ts';
import { describeIssues } from '../validation-issue.ts';
import { RELAYER_ACTIONS, type RelayerAction } from './actions.ts';

/**
 * What each action of PATCH /v2/orders/{id}?action= takes on one family: the body's schema (shown in
 * the OpenAPI document and checked before the family sees the body), or why the family never takes
 * the action from a client.
 */
export type ActionBodies = { readonly [A in RelayerAction]: TSchema | { refused: string } };

/** The family's handler of each action it takes, each given a body its schema has checked. */
export type ActionHandlers<B extends ActionBodies> = {
  [A in RelayerAction as B[A] extends TSchema ? A : never]: (order: OrderRecord, body: B[A] extends TSchema ? Static<B[A]> : never) => Promise<RelayerJob>;
};

/** The 32-byte secret of a redeem (safety rule 3: exactly 32 bytes; its hash is the family's check). */
export const SecretBody = Type.Object(
  {
    secret: Type.String({
      pattern: '^(0x)?[0-9a-fA-F]{64}$',
      errorMessage: 'must be the 32-byte secret as 64 hex characters',
      description: 'The secret: 64 hex characters, 0x optional',
    }),
  },
  { title: 'redeem (every family)', description: 'Redeems the destination with the secret' },
);

/** An action that takes nothing: any body is ignored. */
export const NoBody = (title: string, description: string) => Type.Object({}, { title, description });

// Bodies are JSON: no coercion (`false` stays a boolean), as the API's own body validation.
const ajv = new Ajv({ strict: false, verbose: true, allErrors: false, coerceTypes: false });
const compiled = new WeakMap<TSchema, ValidateFunction>();

function validatorOf(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  return validate;
}

/**
 * The branch of a body union the body means: the first whose required fields it has (Solana's
 * initiate takes `signature` or `serialized_tx`), else the first. So an error names the field of the
 * shape the client sent, not the union.
 */
function meantBranch(schema: TSchema, body: Record<string, unknown>): TSchema {
  const branches = schema.anyOf as TSchema[] | undefined;
  if (!branches) return schema;
  return branches.find((branch) => ((branch.required as string[] | undefined) ?? []).every((field) => body[field] !== undefined)) ?? branches[0]!;
}

/** `body` checked against `schema`; 400 naming the field at fault. A missing body is an empty one. */
export function checkedBody<S extends TSchema>(schema: S, body: unknown): Static<S> {
  const value = body ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('invalid body: must be a JSON object');
  const validate = validatorOf(meantBranch(schema, value as Record<string, unknown>));
  if (validate(value)) return value;
  const described = describeIssues(validate.errors ?? []);
  throw invalid(described ? `invalid body field '${described.field}': ${described.problem}` : 'invalid body');
}

/**
 * A family's `perform`: the action's body checked against its schema, then handed, typed, to the
 * action's handler; an action the family never takes is refused with its reason.
 */
export function performWith<B extends ActionBodies>(
  bodies: B,
  handlers: ActionHandlers<B>,
): (order: OrderRecord, action: RelayerAction, body: unknown) => Promise<RelayerJob> {
  for (const action of RELAYER_ACTIONS) {
    const taken = !('refused' in bodies[action]);
    if (taken !== action in handlers) throw new Error(`${action}: a handler must be given exactly for the actions the bodies take`);
  }
  return async (order, action, body) => {
    const spec = bodies[action];
    if ('refused' in spec) throw new AppError('not_supported', spec.refused as string);
    const handler = (handlers as unknown as Record<RelayerAction, (order: OrderRecord, body: unknown) => Promise<RelayerJob>>)[action];
    return handler(order, checkedBody(spec, body));
  };
}
