import { Type } from '@sinclair/typebox';
import { NoBody, SecretBody, type ActionBodies } from '../../relayer/action-bodies.ts';

/** A contract initiator's signature may be any length its ERC-1271 check takes (bounded: 8 KB). */
const SignatureField = (description: string) =>
  Type.String({ pattern: '^(0x)?([0-9a-fA-F]{2}){1,8192}$', errorMessage: 'must be a signature in hex', description });

/** The bodies of the order actions on EVM chains. */
export const EVM_ACTION_BODIES = {
  initiate: Type.Object(
    {
      signature: SignatureField(
        "The source owner's EIP-712 signature of the create response's typed_data (65 bytes), or what its contract accepts under ERC-1271",
      ),
    },
    { title: 'initiate (EVM)', description: 'Gasless initiate of an ERC-20 source: the relayer calls initiateWithSignature' },
  ),
  redeem: SecretBody,
  refund: NoBody('refund (EVM)', 'Refunds the source after its timelock'),
  'instant-refund': Type.Object(
    { signature: SignatureField("The source initiator's EIP-712 signature of Refund(bytes32 orderId) in the source HTLC's domain") },
    { title: 'instant-refund (EVM)', description: 'Refunds the source at once; the solver co-signs while the destination is not funded' },
  ),
} satisfies ActionBodies;
