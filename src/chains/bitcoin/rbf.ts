import { hexToBytes } from '@noble/curves/utils.js';
import { Transaction } from '@scure/btc-signer';
import { addressScript, buildTx, checkFeeRate, dustThreshold, feeFor, signedTx, walletInput, type SignedTx, type Utxo } from './wallet-tx.ts';

/** nSequence signalling BIP125 replaceability, with no relative timelock (BIP68 disabled above 2^31). */
export const RBF_SEQUENCE = 0xfffffffd;

/** A version of a job's transaction: same inputs, the fee at `feeRate`. */
export interface TxVersion {
  txid: string;
  hex: string;
  /** sat/vB, decimal. */
  feeRate: string;
}

/**
 * Whether the network's node software relays BIP125 replacements by default: Bitcoin Core does;
 * Litecoin Core ships with `-mempoolreplacement=0`, so a replacement reaches no miner there.
 */
export function relaysReplacements(network: string): boolean {
  return network.startsWith('bitcoin');
}

/**
 * A transaction signed at `feeRate` and up to `rounds` replacements of it at rising rates (each
 * half again, at least 1 sat/vB, above the one before, at most `maxFeeRate`): signed up front, so
 * the job is complete when written and a bump needs no key or secret. A rate `build` cannot pay
 * (the output would be dust) ends the list.
 */
export function feeLadder(build: (feeRate: bigint) => SignedTx, feeRate: bigint, rounds = 3, maxFeeRate = 200n): [SignedTx, ...TxVersion[]] {
  const first = build(feeRate);
  const versions: TxVersion[] = [];
  let rate = feeRate;
  for (let i = 0; i < rounds; i++) {
    const next = rate + (rate / 2n > 1n ? rate / 2n : 1n);
    if (next > maxFeeRate || rate >= maxFeeRate) break;
    rate = next;
    let tx: SignedTx;
    try {
      tx = build(rate);
    } catch {
      break;
    }
    versions.push({ txid: tx.txid, hex: tx.hex, feeRate: rate.toString() });
  }
  return [first, ...versions];
}

/** Whether every input of a signed transaction signals BIP125 replaceability. */
export function signalsReplacement(hex: string): boolean {
  const tx = Transaction.fromRaw(hexToBytes(hex), { allowUnknownOutputs: true, disableScriptCheck: true });
  for (let i = 0; i < tx.inputsLength; i++) if ((tx.getInput(i).sequence ?? 0xffffffff) > RBF_SEQUENCE) return false;
  return true;
}

export interface CancelParams {
  /** The wallet key every input is a key-path output of. */
  privateKey: Uint8Array;
  network: string;
  /** The inputs of the transaction to take back, with their values. */
  inputs: readonly Utxo[];
  /** The fee of the transaction it replaces, in satoshis. */
  replacedFee: bigint;
  /** sat/vB paid on top of `replacedFee` (BIP125: at least the incremental relay rate on its own size). */
  extraRate: bigint;
  /** The wallet address that gets the inputs back. */
  to: string;
}

/**
 * A replacement that undoes a transaction: the same inputs, one output paying them back to the wallet,
 * with more fee than the one it replaces plus its own size at `extraRate` (so BIP125 relays it and its
 * rate is higher). Undefined when what is left would be dust.
 */
export function buildCancelTx(params: CancelParams): SignedTx | undefined {
  const { privateKey, network } = params;
  checkFeeRate(params.extraRate);
  const inputs = params.inputs.map((utxo) => walletInput(utxo, privateKey, network, RBF_SEQUENCE));
  const script = addressScript(params.to, network);
  const total = params.inputs.reduce((sum, u) => sum + u.value, 0n);
  const vsize = buildTx(inputs, [{ script, amount: total }], true).vsize;
  const amount = total - params.replacedFee - feeFor(params.extraRate, vsize);
  if (amount < dustThreshold(script, network)) return undefined;
  return signedTx(buildTx(inputs, [{ script, amount }]));
}
