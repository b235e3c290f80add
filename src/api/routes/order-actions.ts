import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError, conflict } from '../../errors.ts';
import { jobView } from '../../relayer/order-actions.ts';
import { RELAYER_ACTIONS, type RelayerAction } from '../../relayer/jobs.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, HexId } from '../schemas.ts';

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
  'Relays an HTLC action; the relayer pays the gas. Bodies: initiate `{signature}` (EIP-712 signature of the ' +
  "create response's typed_data by the source owner; gasless apps only), redeem `{secret}` (64 hex, redeems the " +
  'destination), refund `{}` (after the source timelock), instant-refund `{}` (the solver co-signs while the ' +
  'destination is not initiated). Answers 202 with `result` = the transaction hash once the relayer has ' +
  'submitted it (it waits a few seconds), else `result` = "" and the job state in `job`. Repeats and ' +
  'concurrent requests get the same job: one transaction.';

export function orderActionRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const route = (version: 'v2' | 'v3', actions: readonly RelayerAction[]) =>
    app.patch<{ Params: { order: string }; Querystring: { action: RelayerAction } }>(
      `/${version}/orders/:order`,
      {
        preHandler: ctx.auth.preHandler,
        schema: {
          summary: version === 'v2' ? 'Act on an order (gasless)' : 'Refund an order',
          description: DESCRIPTION,
          tags: ['orders'],
          params: Type.Object({ order: HexId }),
          querystring: Type.Object({ action: Type.String({ enum: [...actions], description: 'The HTLC action' }) }),
          response: { 202: ActionAccepted, ...errorResponses(400, 401, 403, 404, 409, 503) },
        },
      },
      async (request, reply) => {
        if (!ctx.orderActions) throw new AppError('unavailable', 'order actions are not available: no relayer is configured');
        const { action } = request.query;
        const job = await ctx.orderActions.perform(request.app!, request.params.order.toLowerCase(), action, request.body);
        if (job.status === 'failed') throw conflict(`${action}: the relayer could not complete it: ${job.lastError}`);
        const view = jobView(job);
        return reply.code(202).send({ status: 'Ok', result: view.tx_hash, job: view });
      },
    );
  route('v2', RELAYER_ACTIONS);
  route('v3', V3_ACTIONS);
}
