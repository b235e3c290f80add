import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import { actionBodyShapes } from '../../chains/adapters.ts';
import { jobView } from '../../relayer/order-actions.ts';
import { RELAYER_ACTIONS, type RelayerAction } from '../../relayer/actions.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, HexId, Ok } from '../schemas.ts';

const V3_ACTIONS = ['refund', 'instant-refund'] as const satisfies readonly RelayerAction[];

const ActionAccepted = Type.Object(
  {
    status: Type.Literal('Ok'),
    result: Type.String({ description: 'The transaction hash, or "" while the relayer has not submitted it yet' }),
    job: Type.Object({
      id: Type.String(),
      action: Type.String(),
      status: Type.String({ description: 'queued, running, submitted, confirmed or failed' }),
      tx_hash: Type.String(),
      attempts: Type.Integer(),
      last_error: Type.String(),
    }),
  },
  { description: 'The relayer job of this order and action (one per order and action)' },
);

const DESCRIPTION =
  'Relays an HTLC action. Only the app that created the order may act on it: any other app gets 403 and nothing is ' +
  'signed or sent. An action the service pays for needs the app\'s gasless flag, else 403: every EVM action (the ' +
  'relayer pays the gas) and a Bitcoin-family instant refund (a fee input from the solver\'s wallet); a Bitcoin-family ' +
  "redeem or refund pays its fee out of the HTLC's outputs and needs no flag. EVM bodies: initiate `{signature}` (EIP-712 signature of the " +
  "create response's typed_data by the source owner, or one its contract accepts under ERC-1271), redeem `{secret}` (64 hex, redeems the " +
  'destination), refund `{}` (after the source timelock), instant-refund `{signature}` (the source initiator\'s EIP-712 ' +
  'signature of Refund(bytes32 orderId) in the source HTLC domain, orderId = 0x + source swap_id, ECDSA or ERC-1271; 400 ' +
  'without it; the solver co-signs while the destination is not initiated). Bitcoin-family bodies: redeem `{secret}` (a destination whose key the service ' +
  'holds: the order was created without destination.delegate), refund `{tx}` (the refund signed with the source ' +
  'delegate key, after the CSV timelock; `{}` when the service holds the key), instant-refund `{signatures}` (or ' +
  '`{signature}` for one output: SIGHASH_SINGLE|ANYONECANPAY signatures of the hashes of GET ' +
  '/v2/orders/{order}/instant-refund-hash by the source delegate key; `{}` when the service holds the key). ' +
  'Answers 202 with `result` = the transaction hash once the relayer has submitted it (it waits a few seconds; a ' +
  'Bitcoin-family transaction is signed when it is queued, so its txid is there at once), else `result` = "" and ' +
  'the job state in `job`. Repeats and concurrent requests get the same job: one transaction.';

const InstantRefundHashes = Ok(
  Type.Union([
    Type.Array(Type.String({ pattern: '^[0-9a-f]{64}$' }), {
      description:
        'Bitcoin-family source: one BIP-341 sighash (hex) per unspent output of the source HTLC, oldest first: the ' +
        'instant-refund leaf spend paying each output in full to the source owner, SIGHASH_SINGLE|ANYONECANPAY',
    }),
    Type.String({
      pattern: '^0x[0-9a-f]{64}$',
      description: "EVM source: the EIP-712 digest of Refund(orderId) in the HTLC's domain, which the source initiator signs",
    }),
  ]),
);

export function orderActionRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const route = (version: 'v2' | 'v3', actions: readonly RelayerAction[]) =>
    app.patch<{ Params: { order: string }; Querystring: { action: RelayerAction } }>(
      `/${version}/orders/:order`,
      {
        onRequest: ctx.auth.onRequest,
        schema: {
          summary: version === 'v2' ? 'Act on an order (gasless)' : 'Refund an order',
          description: DESCRIPTION,
          tags: ['orders'],
          params: Type.Object({ order: HexId }),
          querystring: Type.Object({ action: Type.String({ enum: [...actions], description: 'The HTLC action' }) }),
          documentedBody: Type.Union(actionBodyShapes(), {
            description: "One of these, by the action and the family of the side acted on (redeem: the destination's; others: the source's)",
          }),
          response: { 202: ActionAccepted, ...errorResponses(400, 401, 403, 404, 409, 503) },
        },
      },
      async (request, reply) => {
        if (!ctx.orderActions) throw new AppError('unavailable', 'order actions are not available: no relayer is configured');
        const { action } = request.query;
        const job = await ctx.orderActions.perform(request.app!, request.params.order.toLowerCase(), action, request.body);
        if (job.status === 'failed') throw new AppError('action_failed', `${action}: the relayer could not complete it: ${job.lastError}`);
        const view = jobView(job);
        return reply.code(202).send({ status: 'Ok', result: view.tx_hash, job: view });
      },
    );
  route('v2', RELAYER_ACTIONS);
  route('v3', V3_ACTIONS);

  app.get<{ Params: { order: string } }>(
    '/v2/orders/:order/instant-refund-hash',
    {
      onRequest: ctx.auth.onRequest,
      schema: {
        summary: 'Hashes to sign for an instant refund (Bitcoin-family and EVM sources)',
        description:
          'Bitcoin family: the hashes the source owner signs (BIP-340, with the sighash byte 0x83 appended) and sends with ' +
          'PATCH /v2|v3/orders/{order}?action=instant-refund {signatures}; 409 while the source HTLC is not funded or once it is spent. ' +
          "EVM: one string, the EIP-712 digest of Refund(orderId), which the source initiator signs (a raw secp256k1 signature of it " +
          "equals its eth_signTypedData_v4 signature) and sends as {signature}. 409 once the solver funds the destination; 400 for other sources.",
        tags: ['orders'],
        params: Type.Object({ order: HexId }),
        response: { 200: InstantRefundHashes, ...errorResponses(400, 401, 404, 409, 503) },
      },
    },
    async (request) => {
      if (!ctx.orderActions) throw new AppError('unavailable', 'order actions are not available: no relayer is configured');
      return { status: 'Ok', result: await ctx.orderActions.instantRefundHashes(request.params.order.toLowerCase()) };
    },
  );
}
