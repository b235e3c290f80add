import type { NewUtxo, OutpointSpend } from './store/utxos.ts';
import { htlcSpendOf, type HtlcSpend } from './htlc-witness.ts';
import type { ScriptIndex } from './script-index.ts';

/** A transaction as Bitcoin Core's verbose RPCs show it (`getblock <hash> 2`, `getrawtransaction <txid> true`). */
export interface RpcTransaction {
  txid: string;
  vin: Array<{ txid?: string; vout?: number; coinbase?: string; txinwitness?: string[] }>;
  /** Litecoin's MWEB outputs carry no scriptPubKey. */
  vout: Array<{ value: number; n: number; scriptPubKey?: { hex?: string } }>;
}

export interface RpcBlock {
  hash: string;
  height: number;
  /** Unix seconds. */
  time: number;
  previousblockhash?: string;
  tx: RpcTransaction[];
}

/** An input that may spend a watched output, with what its witness says if it spends an HTLC. */
export interface SpendCandidate extends OutpointSpend {
  htlc: HtlcSpend | undefined;
}

/** What a set of transactions holds for the watcher. */
export interface Scan {
  /** Outputs paying a watched script. */
  outputs: NewUtxo[];
  /** Every input (which of them spend watched outputs, the database's outpoint index tells). */
  inputs: SpendCandidate[];
}

/**
 * Satoshis of an RPC amount (a JSON number of coins with at most 8 decimals). Exact below 2^26
 * coins (67 million), where a double still tells adjacent satoshi amounts apart: above any output.
 */
export function satoshis(coins: number): bigint {
  const [whole = '0', fraction = ''] = coins.toFixed(8).split('.');
  return BigInt(whole) * 100_000_000n + BigInt(fraction.padEnd(8, '0'));
}

/** Matches transactions (of one block, or from the mempool when `block` is null) against the index. */
export function scanTransactions(txs: readonly RpcTransaction[], index: ScriptIndex, block: { number: bigint; time: Date } | null): Scan {
  const outputs: NewUtxo[] = [];
  const inputs: SpendCandidate[] = [];
  for (const tx of txs) {
    for (const out of tx.vout) {
      const script = out.scriptPubKey?.hex;
      const address = script === undefined ? undefined : index.addressOf(script);
      if (script === undefined || address === undefined) continue;
      outputs.push({
        txid: tx.txid,
        vout: out.n,
        script,
        address,
        value: satoshis(out.value),
        blockNumber: block?.number ?? null,
        blockTime: block?.time ?? null,
      });
    }
    for (const input of tx.vin) {
      if (input.txid === undefined || input.vout === undefined) continue; // coinbase
      inputs.push({
        txid: input.txid,
        vout: input.vout,
        spender: tx.txid,
        blockNumber: block?.number ?? null,
        htlc: input.txinwitness ? htlcSpendOf(input.txinwitness) : undefined,
      });
    }
  }
  return { outputs, inputs };
}
