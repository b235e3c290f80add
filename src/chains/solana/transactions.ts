import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  isBlockhash,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';

/** The cluster's base fee per signature, in lamports. */
export const LAMPORTS_PER_SIGNATURE = 5000n;

/**
 * Kit wants a last valid block height with a blockhash, but it is not part of the wire format and the
 * API hands out only the blockhash; clients learn expiry from their own RPC. Not serialized.
 */
const LAST_VALID_BLOCK_HEIGHT_NOT_SERIALIZED = 0n;

/** The recent blockhash from signing options; throws an Error naming it when absent or malformed. */
export function requireBlockhash(recentBlockhash: string | undefined): Blockhash {
  if (recentBlockhash === undefined || recentBlockhash === '') {
    throw new Error('recentBlockhash is required to build Solana transactions');
  }
  if (!isBlockhash(recentBlockhash)) {
    throw new Error(`recentBlockhash: ${JSON.stringify(recentBlockhash)} is not a base58 blockhash`);
  }
  return recentBlockhash;
}

/**
 * An unsigned v0 transaction, base64 in wire format: every signature slot is zeros, the fee payer's
 * first, then the other signers in the order the message compiler puts them (writable before read-only).
 */
export function unsignedV0Transaction(input: {
  feePayer: Address;
  blockhash: Blockhash;
  instructions: readonly Instruction[];
}): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(input.feePayer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: input.blockhash, lastValidBlockHeight: LAST_VALID_BLOCK_HEIGHT_NOT_SERIALIZED },
        m,
      ),
    (m) => appendTransactionMessageInstructions(input.instructions, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}
