import { BaseError, ContractFunctionRevertedError, decodeErrorResult, HttpRequestError, isHex, LimitExceededRpcError, RpcError, RpcRequestError, TimeoutError } from 'viem';
import { redactHex, safeErrorText } from '../../errors.ts';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';

/**
 * A short, safe description of a chain error for the job's `last_error` and the logs. viem's full
 * messages repeat the call's arguments (a redeem's secret, signatures), so only the short message or
 * the revert's error name is kept, and any long hex string is cut (safety rule 7).
 */
export function describeChainError(err: unknown): string {
  let text: string;
  if (err instanceof BaseError) {
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
    const revertName = reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : revertErrorName(err);
    if (revertName) {
      text = `reverted: ${revertName}`;
    } else {
      const details = err.details && err.details !== err.shortMessage ? `: ${err.details}` : '';
      text = `${err.shortMessage}${details}`;
    }
  } else {
    return safeErrorText(err);
  }
  return redactHex(text).slice(0, 500);
}

/**
 * The custom error of a revert that a node reported with its data (eth_estimateGas, eth_call answer
 * `execution reverted` with the error's ABI encoding), decoded with the HTLC and ERC-20 errors.
 */
function revertErrorName(err: BaseError): string | undefined {
  let name: string | undefined;
  err.walk((e) => {
    const data = (e as { data?: unknown }).data;
    if (typeof data !== 'string' || !isHex(data) || data.length < 10) return false;
    try {
      name = decodeErrorResult({ abi: htlcAbi, data }).errorName;
    } catch {
      name = `custom error ${data.slice(0, 10)}`;
    }
    return true;
  });
  return name;
}

const messages = (err: unknown): string => {
  const parts: string[] = [];
  if (err instanceof BaseError) {
    err.walk((e) => {
      if (e instanceof Error) parts.push(e.message, (e as BaseError).details ?? '');
      return false;
    });
  } else if (err instanceof Error) {
    parts.push(err.message);
  }
  return parts.join('\n');
};

export type BroadcastOutcome = 'accepted' | 'nonce-too-low' | 'rejected' | 'unknown';

/**
 * What a failed eth_sendRawTransaction means for the signed transaction:
 * - `accepted`: the node already has it (a resend);
 * - `nonce-too-low`: a transaction with this nonce is mined already (ours or another);
 * - `rejected`: the node answered and refused it, so it is not pending anywhere we sent it;
 * - `unknown`: no clear answer (timeout, connection lost): it may be pending, so it must be kept.
 */
export function classifyBroadcastError(err: unknown): BroadcastOutcome {
  const text = messages(err);
  if (/already known|already imported|known transaction|already exists/i.test(text)) return 'accepted';
  if (/nonce too low|nonce has already been used|oldnonce/i.test(text)) return 'nonce-too-low';
  const answered =
    err instanceof BaseError && err.walk((e) => e instanceof RpcError || e instanceof RpcRequestError) !== null;
  return answered ? 'rejected' : 'unknown';
}

/**
 * Whether the node could not be asked: the connection failed or timed out, or it answered with an
 * HTTP error (5xx, 429 from a provider's rate limit) or a JSON-RPC "limit exceeded". Nothing was
 * judged: the engine waits and asks again, and no attempt is used up.
 */
export function isNodeUnreachable(err: unknown): boolean {
  if (!(err instanceof BaseError)) return err instanceof TypeError && /fetch failed/i.test(err.message);
  return (
    err.walk((e) => {
      if (e instanceof TimeoutError || e instanceof LimitExceededRpcError) return true;
      if (e instanceof HttpRequestError) return e.status === undefined || e.status === 408 || e.status === 429 || e.status >= 500;
      return false;
    }) !== null
  );
}
