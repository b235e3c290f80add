// The Tron shape of what anvil reports of a transaction: its result, and `gettransactioninfobyid`'s answer.
import { TronWeb } from 'tronweb';
import type { Hex } from 'viem';
import type { EvmBlock } from './blocks.ts';
import type { IndexedTransaction } from './transaction-index.ts';

/** The parts of an anvil receipt the Tron view needs. */
export interface EvmReceipt {
  status: Hex;
  gasUsed: Hex;
  blockNumber: Hex;
  logs: Array<{ address: Hex; topics: Hex[]; data: Hex }>;
}

export type TronOutcome = 'SUCCESS' | 'REVERT' | 'OUT_OF_ENERGY';

const strip = (hex: string) => hex.replace(/^0x/, '').toLowerCase();

/** A failed call that used all the gas it had ran out of energy; one that stopped short reverted. */
export function outcomeOf(entry: IndexedTransaction, receipt: EvmReceipt): TronOutcome {
  if (Number(receipt.status) === 1) return 'SUCCESS';
  return BigInt(receipt.gasUsed) >= BigInt(entry.gasLimit) ? 'OUT_OF_ENERGY' : 'REVERT';
}

/**
 * `wallet/gettransactioninfobyid`'s answer: the energy used (EVM gas) and its fee at `energyPriceSun`,
 * the block, the logs (20-byte addresses, hex without 0x, as Tron writes them), and `result: 'FAILED'`
 * with a hex message when the call did not succeed. `contractResult` stays empty: anvil's receipts
 * carry no return data.
 */
export function transactionInfoJson(entry: IndexedTransaction, receipt: EvmReceipt, block: EvmBlock, energyPriceSun: bigint): Record<string, unknown> {
  const outcome = outcomeOf(entry, receipt);
  const energy = BigInt(receipt.gasUsed);
  const fee = energy * energyPriceSun;
  // The contract called, or the one a creation creates.
  const contractAddress = entry.contract ?? String(entry.tx.raw_data.contract[0]!.parameter.value.contract_address);
  return {
    id: entry.tx.txID.toLowerCase(),
    fee: Number(fee),
    blockNumber: block.number,
    blockTimeStamp: block.timestamp * 1000,
    contractResult: [''],
    contract_address: TronWeb.address.toHex(contractAddress).toLowerCase(),
    receipt: { energy_fee: Number(fee), energy_usage_total: Number(energy), result: outcome },
    log: receipt.logs.map((log) => ({ address: strip(log.address), topics: log.topics.map(strip), data: strip(log.data) })),
    ...(outcome === 'SUCCESS' ? {} : { result: 'FAILED', resMessage: Buffer.from(outcome === 'REVERT' ? 'REVERT opcode executed' : 'Not enough energy').toString('hex') }),
  };
}
