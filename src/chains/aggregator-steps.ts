import { toDisplay } from '../pricing/amounts.ts';
import type { AggregatorFamily, AggregatorStep } from './adapter.ts';
import type { Asset } from './registry.ts';

/** `0.1 BTC`: an amount of `asset` in whole units, for a step's text. */
export function shownAmount(asset: Asset, amount: bigint | string): string {
  const text = toDisplay(BigInt(amount), asset.decimals);
  return `${text.includes('.') ? text.replace(/\.?0+$/, '') : text} ${asset.symbol.toUpperCase()}`;
}

/** The user's refund of a Solidity HTLC's order `swapId` once it expired: `request` calls `refund(orderID)`. */
export function htlcRefundStep(asset: Asset, amount: bigint, request: object): AggregatorStep {
  const symbol = asset.symbol.toUpperCase();
  return transactionStep(asset, 'refund', `Refund ${symbol}`, `The swap expired: take back the ${shownAmount(asset, amount)} locked in the HTLC.`, request);
}

/** A `transaction` step: `request` (the chain's own transaction request) to sign and send. */
export function transactionStep(asset: Asset, id: string, action: string, description: string, request: object): AggregatorStep {
  return { id, kind: 'transaction', action, description, data: { chain: asset.chain.key, ...request } };
}

/**
 * The funding steps of a Solidity HTLC (EVM, Tron) from the create answer's fields: the approval when
 * there is one, then the initiate as a transaction, or with `gasless` and typed data as a signature
 * the service relays (`initiateWithSignature`).
 */
export function htlcFundingSteps(asset: Asset, locked: bigint, data: Record<string, unknown>, gasless: boolean): AggregatorStep[] {
  const amount = shownAmount(asset, locked);
  const steps: AggregatorStep[] = [];
  if (data.approval_transaction) {
    steps.push(transactionStep(asset, 'approve', `Approve ${asset.symbol.toUpperCase()}`, `Allow the HTLC to take ${amount}.`, data.approval_transaction));
  }
  if (gasless && data.typed_data) {
    steps.push({
      id: 'initiate',
      kind: 'signature',
      action: `Sign to lock ${asset.symbol.toUpperCase()}`,
      description: `Sign the typed data; the service locks ${amount} in the HTLC and pays the fee. Submit the signature.`,
      data: { chain: asset.chain.key, typed_data: data.typed_data },
    });
  } else {
    steps.push(transactionStep(asset, 'initiate', `Lock ${asset.symbol.toUpperCase()}`, `Lock ${amount} in the HTLC.`, data.initiate_transaction as object));
  }
  return steps;
}

/**
 * The Bitcoin family's part (kept here while src/chains/bitcoin/ is being reworked; it belongs in its
 * adapter): the source is funded by a payment of exactly `amount` to the taproot HTLC address, from any
 * wallet. The service holds the client's script key, so it refunds an expired source itself.
 */
export const bitcoinAggregator: AggregatorFamily = {
  vmType: 'bvm',
  fundingSteps: (asset, amount, data) => [
    {
      id: 'initiate',
      kind: 'deposit',
      action: `Send ${asset.symbol.toUpperCase()}`,
      description: `Send ${shownAmount(asset, amount)} to the deposit address.`,
      deposit: { chain: asset.chain.key, address: String(data.to), amount: String(data.amount) },
    },
  ],
};
