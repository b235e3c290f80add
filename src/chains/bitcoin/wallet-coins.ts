import { Transaction } from '@scure/btc-signer';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import type { Utxo } from './wallet-tx.ts';
import { utxosOf } from './store/utxos.ts';
import { pendingBitcoinTxs, recordedSpent } from './store/wallet-txs.ts';
import type { Db } from '../../store/database.ts';

/**
 * The node's default limits on a chain of unconfirmed transactions (-limitancestorcount,
 * -limitdescendantcount): a transaction with more in-mempool ancestors, or one that would give an
 * ancestor more descendants, is refused.
 */
export const MEMPOOL_CHAIN_LIMIT = 25;
/** Room left under the limit for descendants the wallet does not write (a client redeeming its HTLC itself). */
const CHAIN_MARGIN = 2;

/** A wallet output that can be spent, with the wallet's own unsettled transactions it descends from. */
export interface WalletCoin extends Utxo {
  confirmed: boolean;
  /** Txids of the unconfirmed transactions this output depends on (its own transaction included). */
  ancestors: ReadonlySet<string>;
}

export interface WalletCoins {
  /** Spendable outputs: confirmed ones largest first, then unconfirmed ones on the shortest chains. */
  coins: WalletCoin[];
  /** Per unsettled transaction, how many unsettled transactions descend from it, itself included. */
  descendants: ReadonlyMap<string, number>;
  /** Unconfirmed outputs left out because spending them would pass the node's limits. */
  atLimit: number;
}

const key = (o: { txid: string; vout: number }) => `${o.txid}:${o.vout}`;

/**
 * The wallet's spendable outputs: the confirmed ones the watcher recorded, and the change of the
 * wallet's own signed, unsettled transactions (the solver's fundings, under the wallet lock), so that
 * concurrent fundings need not wait for a block or for the watcher. Outputs an unsettled job spends or
 * the watcher saw spent are left out. Unconfirmed outputs of others are left out too: their ancestry is
 * unknown. Read under the wallet lock.
 */
export async function walletCoins(db: Db, chain: string, wallet: string, walletScript: Uint8Array): Promise<WalletCoins> {
  const pending = await pendingBitcoinTxs(db, chain);
  const reserved = new Set(pending.flatMap((p) => p.inputs.map(key)));
  const recorded = (await utxosOf(db, chain, wallet, { unspent: true })).filter((u) => u.blockNumber !== null && !reserved.has(key(u)));
  const confirmedTxids = new Set(recorded.map((u) => u.txid));

  const inputsOf = new Map(pending.filter((p) => !confirmedTxids.has(p.txid)).map((p) => [p.txid, p.inputs]));
  const ancestorsMemo = new Map<string, Set<string>>();
  const ancestorsOf = (txid: string): Set<string> => {
    let found = ancestorsMemo.get(txid);
    if (found) return found;
    found = new Set([txid]);
    ancestorsMemo.set(txid, found);
    for (const input of inputsOf.get(txid) ?? []) if (inputsOf.has(input.txid)) for (const a of ancestorsOf(input.txid)) found.add(a);
    return found;
  };
  const descendants = new Map<string, number>();
  for (const txid of inputsOf.keys()) for (const a of ancestorsOf(txid)) descendants.set(a, (descendants.get(a) ?? 0) + 1);

  const scriptHex = bytesToHex(walletScript);
  const change: WalletCoin[] = [];
  for (const p of pending) {
    if (!inputsOf.has(p.txid)) continue;
    const tx = Transaction.fromRaw(hexToBytes(p.rawTx), { allowUnknownOutputs: true });
    for (let vout = 0; vout < tx.outputsLength; vout++) {
      const out = tx.getOutput(vout);
      if (!out.script || out.amount === undefined || bytesToHex(out.script) !== scriptHex) continue;
      const coin = { txid: p.txid, vout, value: out.amount, confirmed: false, ancestors: ancestorsOf(p.txid) };
      if (!reserved.has(key(coin))) change.push(coin);
    }
  }
  const spent = await recordedSpent(db, chain, change.map(({ txid, vout }) => ({ txid, vout })));
  const unspentChange = change.filter((c) => !spent.has(key(c)));
  const usable = unspentChange.filter((c) => fitsUnderLimits([c], descendants));
  const coins: WalletCoin[] = [
    ...recorded.map((u) => ({ txid: u.txid, vout: u.vout, value: u.value, confirmed: true, ancestors: new Set<string>() })).sort(largestFirst),
    ...usable.sort((a, b) => a.ancestors.size - b.ancestors.size || largestFirst(a, b)),
  ];
  return { coins, descendants, atLimit: unspentChange.length - usable.length };
}

/** Whether a transaction spending `inputs` stays under the node's ancestor and descendant limits. */
export function fitsUnderLimits(inputs: readonly WalletCoin[], descendants: ReadonlyMap<string, number>): boolean {
  const limit = MEMPOOL_CHAIN_LIMIT - CHAIN_MARGIN;
  const ancestors = new Set(inputs.flatMap((c) => [...c.ancestors]));
  if (ancestors.size + 1 > limit) return false;
  return [...ancestors].every((a) => (descendants.get(a) ?? 1) + 1 <= limit);
}

function largestFirst(a: Utxo, b: Utxo): number {
  if (a.value !== b.value) return a.value > b.value ? -1 : 1;
  return a.txid.localeCompare(b.txid) || a.vout - b.vout;
}
