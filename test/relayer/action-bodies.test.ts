// The order actions' bodies (PATCH /v2/orders/{id}?action=) as each family declares them: checked
// before the family sees them, every failure naming the field; an action a family never takes is
// refused with its reason; a handler gets the body its schema checked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BITCOIN_ACTION_BODIES, INITIATE_REFUSAL } from '../../src/chains/bitcoin/action-bodies.ts';
import { EVM_ACTION_BODIES } from '../../src/chains/evm/action-bodies.ts';
import { SOLANA_ACTION_BODIES } from '../../src/chains/solana/action-bodies.ts';
import { AppError, type ErrorCode } from '../../src/errors.ts';
import { checkedBody, NoBody, performWith, SecretBody, type ActionBodies } from '../../src/relayer/action-bodies.ts';
import { sampleOrder } from '../helpers/fixtures.ts';
import type { OrderRecord } from '../../src/store/orders.ts';
import type { RelayerJob } from '../../src/store/relayer-jobs.ts';

const refused = (code: ErrorCode, message: RegExp | string) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.code, code);
  if (typeof message === 'string') assert.equal(err.message, message);
  else assert.match(err.message, message);
  return true;
};
const refuses = (schema: Parameters<typeof checkedBody>[0], body: unknown, message: RegExp | string) =>
  assert.throws(() => checkedBody(schema, body), refused('invalid_request', message));

const SECRET = 'ab'.repeat(32);
const SACP = `${'cd'.repeat(64)}83`;

test('a field missing, of the wrong type or form is a 400 naming it; nothing is coerced', () => {
  refuses(EVM_ACTION_BODIES.initiate, {}, "invalid body field 'signature': is required");
  refuses(EVM_ACTION_BODIES.initiate, { signature: 'zz' }, "invalid body field 'signature': must be a signature in hex");
  refuses(EVM_ACTION_BODIES.initiate, { signature: true }, "invalid body field 'signature': must be a signature in hex");
  refuses(EVM_ACTION_BODIES.initiate, { signature: 1234 }, "invalid body field 'signature': must be a signature in hex");
  refuses(SecretBody, { secret: 'ab'.repeat(31) }, "invalid body field 'secret': must be the 32-byte secret as 64 hex characters");
  refuses(SecretBody, { secret: `${SECRET}00` }, "invalid body field 'secret': must be the 32-byte secret as 64 hex characters");
  refuses(BITCOIN_ACTION_BODIES.refund, { tx: 'abc' }, "invalid body field 'tx': must be the signed refund transaction in hex");
  assert.deepEqual(checkedBody(SecretBody, { secret: `0x${SECRET}` }), { secret: `0x${SECRET}` });
});

test('a body that is no JSON object is refused; none at all is an empty one', () => {
  for (const body of ['x', 5, [], [{ secret: SECRET }], true]) refuses(EVM_ACTION_BODIES.refund, body, 'invalid body: must be a JSON object');
  assert.deepEqual(checkedBody(EVM_ACTION_BODIES.refund, undefined), {});
  assert.deepEqual(checkedBody(EVM_ACTION_BODIES.refund, null), {});
  assert.deepEqual(checkedBody(BITCOIN_ACTION_BODIES.refund, { tx: '' }), { tx: '' });
});

test("Solana's two initiate shapes: the error names the field of the shape sent", () => {
  refuses(SOLANA_ACTION_BODIES.initiate, {}, "invalid body field 'signature': is required");
  refuses(SOLANA_ACTION_BODIES.initiate, { signature: 'not base64!' }, "invalid body field 'signature': must be a signed Solana transaction in base64");
  refuses(SOLANA_ACTION_BODIES.initiate, { serialized_tx: 'not base64!' }, "invalid body field 'serialized_tx': must be a signed Solana transaction in base64");
  refuses(SOLANA_ACTION_BODIES.initiate, { serialized_tx: 'AAAA'.repeat(1025) }, /^invalid body field 'serialized_tx': /);
  refuses(SOLANA_ACTION_BODIES.initiate, { signature: 'AAAA', order_id: 7 }, /^invalid body field 'order_id': /);
  assert.deepEqual(checkedBody(SOLANA_ACTION_BODIES.initiate, { serialized_tx: 'AAAA' }), { serialized_tx: 'AAAA' });
});

test("a Bitcoin instant refund's signatures are checked one by one, by index", () => {
  const body = BITCOIN_ACTION_BODIES['instant-refund'];
  refuses(body, { signatures: [SACP, `${'cd'.repeat(64)}01`] }, /^invalid body field 'signatures\[1\]': must be a 65-byte BIP-340 signature/);
  refuses(body, { signatures: [] }, /^invalid body field 'signatures': /);
  refuses(body, { signatures: SACP }, /^invalid body field 'signatures': /);
  refuses(body, { signature: 'ab' }, /^invalid body field 'signature': must be a 65-byte BIP-340 signature/);
  assert.deepEqual(checkedBody(body, { signatures: [SACP] }), { signatures: [SACP] });
  assert.deepEqual(checkedBody(body, {}), {});
});

test('performWith hands each handler its checked body, and refuses an action the family never takes', async () => {
  const bodies = { initiate: { refused: INITIATE_REFUSAL }, redeem: SecretBody, refund: NoBody('refund', ''), 'instant-refund': NoBody('ir', '') } satisfies ActionBodies;
  const seen: Array<[string, unknown]> = [];
  const job = (action: string) => ({ id: action }) as unknown as RelayerJob;
  const perform = performWith(bodies, {
    redeem: async (_order, body) => (seen.push(['redeem', body.secret]), job('redeem')),
    refund: async (_order, body) => (seen.push(['refund', body]), job('refund')),
    'instant-refund': async () => job('instant-refund'),
  });
  const order = sampleOrder('app') as unknown as OrderRecord;
  await assert.rejects(perform(order, 'initiate', {}), refused('not_supported', INITIATE_REFUSAL));
  await assert.rejects(perform(order, 'redeem', { secret: 'no' }), refused('invalid_request', /^invalid body field 'secret'/));
  assert.deepEqual(seen, [], 'no handler ran for a refused body');
  assert.equal((await perform(order, 'redeem', { secret: SECRET })).id, 'redeem');
  assert.equal((await perform(order, 'refund', undefined)).id, 'refund');
  assert.deepEqual(seen, [['redeem', SECRET], ['refund', {}]]);

  assert.throws(() => performWith(bodies, { redeem: async () => job('r'), refund: async () => job('r') } as never), /instant-refund: a handler must be given/);
  assert.throws(
    () => performWith(bodies, { initiate: async () => job('i'), redeem: async () => job('r'), refund: async () => job('r'), 'instant-refund': async () => job('r') } as never),
    /initiate: a handler must be given/,
  );
});
