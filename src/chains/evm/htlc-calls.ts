import { concat, encodeAbiParameters, erc20Abi, numberToHex, toFunctionSelector, type Address, type Hex } from 'viem';
import { htlcInitiateAbi } from '../solidity-htlc/htlc-abi.ts';

/** An EVM transaction for the client to send, in the API's TxRequest shape. */
export interface TxRequest {
  to: string;
  value: string;
  data: string;
  gas_limit: string;
  chain_id: number;
}

// Selectors computed once: viem's encodeFunctionData hashes the signature on every call.
const INITIATE = htlcInitiateAbi[0];
const INITIATE_SELECTOR = toFunctionSelector(INITIATE);
const APPROVE = erc20Abi.find((item) => item.type === 'function' && item.name === 'approve')!;
const APPROVE_SELECTOR = toFunctionSelector(APPROVE);

const INITIATE_GAS = 200_000n;
const APPROVE_GAS = 100_000n;

export function initiateTransaction(input: {
  chainId: number;
  htlc: Address;
  native: boolean;
  redeemer: Address;
  timelock: bigint;
  amount: bigint;
  secretHash: Hex;
}): TxRequest {
  return {
    to: input.htlc,
    value: numberToHex(input.native ? input.amount : 0n),
    data: concat([
      INITIATE_SELECTOR,
      encodeAbiParameters(INITIATE.inputs, [input.redeemer, input.timelock, input.amount, input.secretHash]),
    ]),
    gas_limit: numberToHex(INITIATE_GAS),
    chain_id: input.chainId,
  };
}

/** ERC-20 approve of exactly the swap amount to the HTLC. */
export function approvalTransaction(input: { chainId: number; token: Address; htlc: Address; amount: bigint }): TxRequest {
  return {
    to: input.token,
    value: '0x0',
    data: concat([APPROVE_SELECTOR, encodeAbiParameters(APPROVE.inputs, [input.htlc, input.amount])]),
    gas_limit: numberToHex(APPROVE_GAS),
    chain_id: input.chainId,
  };
}
