import { Type } from '@sinclair/typebox';
import { NoBody, SecretBody, type ActionBodies } from '../../relayer/action-bodies.ts';

/** A Bitcoin-family source is funded by a payment, which the client makes itself. */
export const INITIATE_REFUSAL = 'initiate: a Bitcoin-family source is initiated by sending `amount` to the HTLC address `to`; there is nothing to relay';

/** Most signatures an instant refund takes: one per HTLC output. */
export const MAX_SIGNATURES = 256;

export const SacpSignature = Type.String({
  pattern: '^(0x)?[0-9a-fA-F]{128}83$',
  errorMessage: 'must be a 65-byte BIP-340 signature in hex: 64 bytes and the SIGHASH_SINGLE|ANYONECANPAY byte 83',
  description: 'A BIP-340 signature with the sighash byte 83 (SIGHASH_SINGLE|ANYONECANPAY), in hex',
});

/** The bodies of the order actions on Bitcoin-family chains. */
export const BITCOIN_ACTION_BODIES = {
  initiate: { refused: INITIATE_REFUSAL },
  redeem: SecretBody,
  refund: Type.Object(
    {
      tx: Type.Optional(
        Type.String({
          pattern: '^((0x)?([0-9a-fA-F]{2})+)?$',
          errorMessage: 'must be the signed refund transaction in hex',
          description: 'The refund signed with the source delegate key; leave it out when the service holds the key',
        }),
      ),
    },
    { title: 'refund (Bitcoin family)', description: 'Refunds the source through its refund leaf after the CSV timelock' },
  ),
  'instant-refund': Type.Union([
    Type.Object(
      {
        signatures: Type.Array(SacpSignature, {
          minItems: 1,
          maxItems: MAX_SIGNATURES,
          errorMessage: `must be an array of 1 to ${MAX_SIGNATURES} signatures, one per HTLC output`,
          description: 'One signature per hash of GET /v2/orders/{id}/instant-refund-hash, in its order',
        }),
      },
      {
        title: 'instant-refund (Bitcoin family)',
        description: "Refunds the source at once with the source delegate key's signatures; the solver co-signs and pays the fee",
      },
    ),
    Type.Object(
      { signature: SacpSignature },
      { title: 'instant-refund (Bitcoin family, one output)', description: 'The same for a source HTLC with one output' },
    ),
    NoBody('instant-refund (Bitcoin family, service-held key)', 'When the order was created without source.delegate, the service signs with the key it holds'),
  ]),
} satisfies ActionBodies;
