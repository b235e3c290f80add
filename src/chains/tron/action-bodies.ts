import { Type } from '@sinclair/typebox';
import { NoBody, SecretBody, type ActionBodies } from '../../relayer/action-bodies.ts';

const SignatureField = (description: string) =>
  Type.String({ pattern: '^(0x)?[0-9a-fA-F]{130}$', errorMessage: 'must be a 65-byte signature in hex', description });

/** The bodies of the order actions on Tron chains. */
export const TRON_ACTION_BODIES = {
  initiate: Type.Object(
    { signature: SignatureField("The source owner's TIP-712 signature of the create response's typed_data (65 bytes r|s|v)") },
    { title: 'initiate (Tron)', description: 'Gasless initiate of a TRC-20 source: the relayer calls initiateWithSignature and pays the energy' },
  ),
  redeem: SecretBody,
  refund: NoBody('refund (Tron)', 'Refunds the source after its timelock'),
  'instant-refund': Type.Object(
    { signature: SignatureField("The source initiator's TIP-712 signature of Refund(bytes32 orderId) in the source HTLC's domain") },
    { title: 'instant-refund (Tron)', description: 'Refunds the source at once; the solver co-signs while the destination is not funded' },
  ),
} satisfies ActionBodies;
