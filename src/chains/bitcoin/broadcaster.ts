import { BitcoinRpcError, RPC_ERRORS, type BitcoinRpc } from './rpc.ts';

/** Node answers to sendrawtransaction that mean the transaction is already out. */
const ALREADY_KNOWN = /already in (the )?block ?chain|txn-already-in-mempool|txn-already-known|already have transaction/i;
/** Answers that mean it cannot be mined now but may later (a timelock that has not run out). */
const NOT_YET = /non-BIP68-final|non-final/i;

/**
 * Whether the node judged the transaction itself (invalid, or in conflict), rather than being out of
 * reach, warming up, or saying it is not final yet: only the first is a verdict on the transaction.
 */
export function refusedByNode(err: unknown): boolean {
  return err instanceof BitcoinRpcError && err.code !== 401 && !NOT_YET.test(err.message) && err.code !== RPC_ERRORS.inWarmup && !httpFault(err.code);
}

/** An HTTP status of the node's server (5xx, or 429 from a provider) rather than a JSON-RPC verdict. */
const httpFault = (code: number): boolean => code === 408 || code === 429 || (code >= 500 && code < 600);

/** Sends a signed transaction; one the node already has (in its mempool or chain) is not an error. */
export async function broadcastBitcoinTx(rpc: BitcoinRpc, rawTx: string): Promise<'sent' | 'known'> {
  try {
    await rpc.sendRawTransaction(rawTx);
    return 'sent';
  } catch (err) {
    const message = err instanceof BitcoinRpcError ? err.message : '';
    if (ALREADY_KNOWN.test(message)) return 'known';
    throw err;
  }
}
