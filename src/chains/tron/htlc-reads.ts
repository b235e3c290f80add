import { decodeFunctionResult, encodeFunctionData, erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';
import { evmHexToTron } from './address.ts';
import { TronApiError, type TronApi } from './api.ts';
import { hex41 } from './transactions.ts';

/** An HTLC order as the contract stores it; `initiator` is undefined when there is none. Parties base58. */
export interface OnChainTronOrder {
  initiator: string | undefined;
  redeemer: string;
  initiatedAt: bigint;
  timelock: bigint;
  amount: bigint;
  fulfilledAt: bigint;
}

const ZERO: Address = '0x0000000000000000000000000000000000000000';
const tokenAbi = [{ type: 'function', name: 'token', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] }] as const;

/** Reads of the Tron HTLCs and TRC-20s through constant calls (at the head block), from the zero address. */
export class TronHtlcReader {
  private readonly tokens = new Map<string, Promise<string>>();

  constructor(readonly api: TronApi) {}

  private async call(contract: string, data: Hex): Promise<Hex> {
    const answer = await this.api.constantCall({ owner: `41${'00'.repeat(20)}`, contract: hex41(contract), data: data.slice(2) });
    if (!answer.ok) throw new TronApiError(`a read of ${contract} failed: ${answer.message ?? 'reverted'}`);
    return `0x${answer.output}`;
  }

  /** `orders(orderID)` of an HTLC (base58). */
  async order(htlc: string, orderId: Hex): Promise<OnChainTronOrder> {
    const output = await this.call(htlc, encodeFunctionData({ abi: htlcAbi, functionName: 'orders', args: [orderId] }));
    const [initiator, redeemer, initiatedAt, timelock, amount, fulfilledAt] = decodeFunctionResult({ abi: htlcAbi, functionName: 'orders', data: output });
    return {
      initiator: getAddress(initiator) === ZERO ? undefined : evmHexToTron(initiator),
      redeemer: evmHexToTron(redeemer),
      initiatedAt,
      timelock,
      amount,
      fulfilledAt,
    };
  }

  /** The TRC-20 an HTLC locks (fixed at its deployment: read once), base58. */
  token(htlc: string): Promise<string> {
    let token = this.tokens.get(htlc);
    if (!token) {
      token = this.call(htlc, encodeFunctionData({ abi: tokenAbi, functionName: 'token' })).then((data) =>
        evmHexToTron(decodeFunctionResult({ abi: tokenAbi, functionName: 'token', data })),
      );
      token.catch(() => this.tokens.delete(htlc));
      this.tokens.set(htlc, token);
    }
    return token;
  }

  async trc20Balance(token: string, owner: string): Promise<bigint> {
    const data = await this.call(token, encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [getAddress(`0x${hex41(owner).slice(2)}`)] }));
    return decodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', data });
  }

  async allowance(token: string, owner: string, spender: string): Promise<bigint> {
    const evm = (a: string) => getAddress(`0x${hex41(a).slice(2)}`);
    const data = await this.call(token, encodeFunctionData({ abi: erc20Abi, functionName: 'allowance', args: [evm(owner), evm(spender)] }));
    return decodeFunctionResult({ abi: erc20Abi, functionName: 'allowance', data });
  }
}
