import { encodeFunctionData, erc20Abi } from 'viem';
import { htlcInitiateAbi } from '../solidity-htlc/htlc-abi.ts';
import { tronAddress, tronToEvmHex } from './address.ts';
import { secretHashHex } from './order-id.ts';

/**
 * A TVM contract call for the client to build, sign and broadcast, in the API's TxRequest shape, which
 * Garden's SDK reads for Tron too (`isEvmOrderResponse`, then `TronRelay`): `to` the contract (base58),
 * `data` the ABI call data (0x hex, selector first), `value` the call value in SUN and `gas_limit` the
 * fee limit in SUN (decimal strings: TronRelay passes them to parseInt as TronWeb's `callValue` and
 * `feeLimit`), `chain_id` Tron's chain id (the low 32 bits of the TVM's `block.chainid`).
 */
export interface TronTxRequest {
  to: string;
  value: string;
  data: string;
  gas_limit: string;
  chain_id: number;
}

/** Upper bounds on the TRX burnt for energy: 100 TRX for approve, 150 TRX for initiate. */
export const APPROVE_FEE_LIMIT = 100_000_000;
export const INITIATE_FEE_LIMIT = 150_000_000;

/** TRC-20 `approve(htlc, amount)` of exactly the swap amount (TronRelay decodes spender and amount from `data`). */
export function approveCall(input: { chainId: number; token: string; htlc: string; amount: bigint }): TronTxRequest {
  return {
    to: tronAddress(input.token, 'token'),
    value: '0',
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [tronToEvmHex(input.htlc, 'htlc'), input.amount] }),
    gas_limit: String(APPROVE_FEE_LIMIT),
    chain_id: input.chainId,
  };
}

/**
 * HTLC `initiate(redeemer, timelock, amount, secretHash)`; the sender is the initiator. (TronRelay
 * calls the five-argument initiate with the same values and the destination data from
 * `typed_data.message`; both make the same order.)
 */
export function initiateCall(input: { chainId: number; htlc: string; redeemer: string; timelock: bigint; amount: bigint; secretHash: string }): TronTxRequest {
  return {
    to: tronAddress(input.htlc, 'htlc'),
    value: '0',
    data: encodeFunctionData({
      abi: htlcInitiateAbi,
      functionName: 'initiate',
      args: [tronToEvmHex(input.redeemer, 'redeemer'), input.timelock, input.amount, secretHashHex(input.secretHash)],
    }),
    gas_limit: String(INITIATE_FEE_LIMIT),
    chain_id: input.chainId,
  };
}
