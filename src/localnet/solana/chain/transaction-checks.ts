import { createPublicKey, verify } from 'node:crypto';
import { address, getAddressEncoder } from '@solana/kit';
import { INVALID_PARAMS, RpcError } from './rpc-error.ts';
import { transactionErrorText } from './transaction-errors.ts';
import { isSanitary, MAX_TRANSACTION_BYTES, parseWireTransaction, WireFormatError, type ParsedTransaction } from './wire-transaction.ts';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo, before the 32 key bytes. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const addressEncoder = getAddressEncoder();

/** Whether every signature verifies against its signer's key (what the runtime's sigverify checks). */
export function signaturesVerify(tx: ParsedTransaction): boolean {
  const message = tx.message;
  return tx.signatures.every((signature, i) => {
    const signer = message.staticAccountKeys[i];
    if (signer === undefined) return false;
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(addressBytes(signer))]), format: 'der', type: 'spki' });
    return verify(null, message.bytes, key, signature);
  });
}

function addressBytes(key: string): Uint8Array {
  return addressEncoder.encode(address(key)) as Uint8Array;
}

/** A transaction param's bytes decoded and sanitized, or the -32602 the real RPC gives. */
export function decodeTransaction(wire: Uint8Array): ParsedTransaction {
  if (wire.length > MAX_TRANSACTION_BYTES) {
    throw new RpcError(INVALID_PARAMS, `transaction too large: ${wire.length} bytes (max: ${MAX_TRANSACTION_BYTES} bytes)`);
  }
  let tx: ParsedTransaction;
  try {
    tx = parseWireTransaction(wire);
  } catch (err) {
    if (err instanceof WireFormatError) throw new RpcError(INVALID_PARAMS, `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${err.message}`);
    throw err;
  }
  if (!isSanitary(tx)) throw new RpcError(INVALID_PARAMS, `invalid transaction: ${transactionErrorText('SanitizeFailure')}`);
  return tx;
}

