import { encodeAbiParameters } from 'viem';
import { tronAddress, tronToEvmHex } from './address.ts';
import { secretHashHex } from './order-id.ts';

/**
 * A TVM contract call for the client to build and sign, in the shape of TronWeb's
 * `transactionBuilder.triggerSmartContract` / the HTTP API's `/wallet/triggersmartcontract`:
 * addresses in base58, `function_selector` the signature text, `parameter` the ABI-encoded
 * arguments (hex, no 0x, no selector). `fee_limit` and `call_value` are in SUN and JSON numbers, as
 * those APIs take them (well inside the safe-integer range; `call_value` is 0 for TRC-20 HTLCs).
 * `owner_address` is the account that must send it (the initiator: the HTLC takes the funds and
 * the order's initiator from the sender).
 */
export interface TronContractCall {
  owner_address: string;
  to: string;
  function_selector: string;
  parameter: string;
  fee_limit: number;
  call_value: number;
}

/** Upper bounds on the TRX burnt for energy: 100 TRX for approve, 150 TRX for initiate. */
export const APPROVE_FEE_LIMIT = 100_000_000;
export const INITIATE_FEE_LIMIT = 150_000_000;

const abi = (types: readonly { type: string }[], values: readonly unknown[]): string =>
  encodeAbiParameters(types, values).slice(2);

/** TRC-20 `approve(htlc, amount)` of exactly the swap amount. */
export function approveCall(input: { owner: string; token: string; htlc: string; amount: bigint }): TronContractCall {
  return {
    owner_address: tronAddress(input.owner, 'initiator'),
    to: tronAddress(input.token, 'token'),
    function_selector: 'approve(address,uint256)',
    parameter: abi([{ type: 'address' }, { type: 'uint256' }], [tronToEvmHex(input.htlc, 'htlc'), input.amount]),
    fee_limit: APPROVE_FEE_LIMIT,
    call_value: 0,
  };
}

/** HTLC `initiate(redeemer, timelock, amount, secretHash)`; the sender is the initiator. */
export function initiateCall(input: {
  owner: string;
  htlc: string;
  redeemer: string;
  timelock: bigint;
  amount: bigint;
  secretHash: string;
}): TronContractCall {
  return {
    owner_address: tronAddress(input.owner, 'initiator'),
    to: tronAddress(input.htlc, 'htlc'),
    function_selector: 'initiate(address,uint256,uint256,bytes32)',
    parameter: abi(
      [{ type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes32' }],
      [tronToEvmHex(input.redeemer, 'redeemer'), input.timelock, input.amount, secretHashHex(input.secretHash)],
    ),
    fee_limit: INITIATE_FEE_LIMIT,
    call_value: 0,
  };
}
