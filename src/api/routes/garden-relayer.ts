import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import type { OrderActions } from '../../relayer/order-actions.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, HexId, Ok } from '../schemas.ts';

/**
 * The relayer routes Garden's SDK calls for Bitcoin-family orders (docs/api.md, "Garden SDK relayer
 * routes"). Its executor posts to `{api}/relayer/bitcoin/instant-refund-hash` and `.../instant-refund`,
 * and its user-managed redeem to `{relayer}/bitcoin/redeem` (an SDK user sets `relayer: {api}/relayer`;
 * the SDK's path "/bitcoin/redeem " arrives without its trailing space, which the URL parser strips).
 */

const OrderId = { ...HexId, description: 'The order id' };

const InstantRefundHashes = Ok(
  Type.Array(Type.String({ pattern: '^[0-9a-f]{64}$' }), {
    description: 'The same hashes as GET /v2/orders/{order}/instant-refund-hash: one SIGHASH_SINGLE|ANYONECANPAY sighash per unspent source HTLC output',
  }),
);

export function gardenRelayerRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const actions = (): OrderActions => {
    if (!ctx.orderActions) throw new AppError('unavailable', 'order actions are not available: no relayer is configured');
    return ctx.orderActions;
  };
  const tags = ['garden sdk relayer'];

  app.post<{ Body: { order_id: string } }>(
    '/relayer/bitcoin/instant-refund-hash',
    {
      onRequest: ctx.auth.onRequest,
      schema: {
        summary: 'Hashes to sign for an instant refund (Garden SDK)',
        description:
          'What Garden\'s SDK asks before it posts its instant-refund consent: the hashes of GET /v2/orders/{order}/instant-refund-hash, ' +
          'for the app that created the order (gasless, as the instant refund is paid by the service). 409 while the source HTLC is not funded, ' +
          'once it is spent, or once the solver funds the destination.',
        tags,
        body: Type.Object({ order_id: OrderId }),
        response: { 200: InstantRefundHashes, ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) => ({ status: 'Ok', result: await actions().instantRefundHashesFor(request.app!, request.body.order_id.toLowerCase()) }),
  );

  app.post<{ Body: { order_id: string; signatures: string[] } }>(
    '/relayer/bitcoin/instant-refund',
    {
      onRequest: ctx.auth.onRequest,
      schema: {
        summary: 'Consent to an instant refund should the swap fail (Garden SDK)',
        description:
          'The source delegate\'s signatures (BIP-340 plus the sighash byte 83) of the instant-refund hashes, which Garden\'s SDK posts ' +
          'while the swap is in progress. They are verified and stored as the client\'s consent; nothing is co-signed or sent, and the ' +
          'solver still funds the destination. If the order fails (its deadline passes with the destination unfunded), the service ' +
          'refunds the source at once with them. 400 naming `signatures` when they do not sign the current hashes with the source delegate key.',
        tags,
        body: Type.Object({
          order_id: OrderId,
          signatures: Type.Array(Type.String(), { minItems: 1, maxItems: 256, description: 'One 65-byte signature in hex per hash' }),
        }),
        response: { 200: Ok(Type.Literal('stored', { description: 'The consent is stored' })), ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) => {
      const { order_id: orderId, signatures } = request.body;
      await actions().storeInstantRefundConsent(request.app!, orderId.toLowerCase(), signatures);
      return { status: 'Ok', result: 'stored' };
    },
  );

  app.post<{ Body: { order_id: string; redeem_tx_bytes: string } }>(
    '/relayer/bitcoin/redeem',
    {
      onRequest: ctx.auth.onRequest,
      schema: {
        summary: "Relay the client's own redeem of a Bitcoin-family destination (Garden SDK)",
        description:
          'The signed redeem of the destination HTLC by a client that keeps its key and the secret. It must spend only unspent outputs ' +
          'of this order\'s destination HTLC, each through the redeem leaf with the secret (sha256 = secret_hash) and a signature of the ' +
          'destination delegate key, pay every output to the destination owner, and pay at least 1 sat/vB (400 naming `redeem_tx_bytes`). ' +
          'It is written as the order\'s one redeem job before the relayer broadcasts it; the same transaction again gets the same txid, ' +
          'another one once a redeem is queued 409.',
        tags,
        body: Type.Object({
          order_id: OrderId,
          redeem_tx_bytes: Type.String({ minLength: 1, description: 'The signed transaction in hex' }),
        }),
        response: { 200: Ok(Type.String({ description: 'The txid' })), ...errorResponses(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request) => {
      const { order_id: orderId, redeem_tx_bytes: tx } = request.body;
      const job = await actions().relayClientRedeem(request.app!, orderId.toLowerCase(), tx);
      if (job.status === 'failed') throw new AppError('action_failed', `redeem: the relayer could not complete it: ${job.lastError}`);
      return { status: 'Ok', result: job.txHash };
    },
  );
}
