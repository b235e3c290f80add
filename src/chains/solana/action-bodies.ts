import { Type } from '@sinclair/typebox';
import { NoBody, SecretBody, type ActionBodies } from '../../relayer/action-bodies.ts';

const SignedTransactionField = Type.String({
  maxLength: 4096,
  pattern: '^[A-Za-z0-9+/]+={0,2}$',
  errorMessage: 'must be a signed Solana transaction in base64',
  description: "The order's versioned_tx_gasless, signed by the source initiator, in base64 (its recent blockhash may be newer)",
});
const OrderIdField = Type.Optional(Type.String({ description: "The order's id, when sent: it must be this order's" }));

/** The bodies of the order actions on Solana chains. */
export const SOLANA_ACTION_BODIES = {
  // Garden's SDK sends `signature`, Garden's docs show `serialized_tx`: the same signed transaction.
  initiate: Type.Union([
    Type.Object(
      { order_id: OrderIdField, signature: SignedTransactionField },
      { title: 'initiate (Solana, as Garden\'s SDK sends it)', description: 'Gasless initiate of an SPL source: the relayer pays the fee and rent' },
    ),
    Type.Object(
      { order_id: OrderIdField, serialized_tx: SignedTransactionField },
      { title: 'initiate (Solana, as Garden\'s docs show it)', description: 'The same, with the transaction under serialized_tx' },
    ),
  ]),
  redeem: SecretBody,
  refund: NoBody('refund (Solana)', 'Refunds the source after its expiry slot'),
  'instant-refund': NoBody('instant-refund (Solana)', "Refunds the source at once: the solver signs as its redeemer while the destination is not funded; the app's request is the initiator's consent"),
} satisfies ActionBodies;
