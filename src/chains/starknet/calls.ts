import { hash } from 'starknet';
import { checkU128, feltHex, secretHashWords, splitU256, starknetAddress } from './felt.ts';

/**
 * A Starknet contract call for the client to execute (alone or multicalled: approve then initiate).
 * `to` is the canonical address (0x + 64 hex); `selector` is the entry point's selector, pre-hashed;
 * `calldata` holds felts as minimal 0x hex, the FELT form of Starknet JSON-RPC and the wallet API
 * (`wallet_addInvokeTransaction`), which starknet.js `account.execute` accepts as is.
 */
export interface StarknetCall {
  to: string;
  selector: string;
  calldata: string[];
}

export const SELECTORS = {
  approve: hash.getSelectorFromName('approve'),
  initiate: hash.getSelectorFromName('initiate'),
} as const;

/** ERC-20 `approve(spender = htlc, amount: u256)` of exactly the swap amount. */
export function approveCall(input: { token: string; htlc: string; amount: bigint }): StarknetCall {
  const { low, high } = splitU256(input.amount);
  return {
    to: starknetAddress(input.token, 'token'),
    selector: SELECTORS.approve,
    calldata: [feltHex(BigInt(starknetAddress(input.htlc, 'htlc'))), feltHex(low), feltHex(high)],
  };
}

/** HTLC `initiate(redeemer, timelock: u128, amount: u256, secret_hash: [u32; 8])`; the caller is the initiator. */
export function initiateCall(input: {
  htlc: string;
  redeemer: string;
  timelock: bigint;
  amount: bigint;
  secretHash: string;
}): StarknetCall {
  const { low, high } = splitU256(input.amount);
  return {
    to: starknetAddress(input.htlc, 'htlc'),
    selector: SELECTORS.initiate,
    calldata: [
      feltHex(BigInt(starknetAddress(input.redeemer, 'redeemer'))),
      feltHex(checkU128(input.timelock, 'timelock')),
      feltHex(low),
      feltHex(high),
      ...secretHashWords(input.secretHash).map((w) => feltHex(w)),
    ],
  };
}
