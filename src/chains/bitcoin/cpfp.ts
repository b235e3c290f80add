import { addressScript, buildTx, checkFeeRate, dustThreshold, feeFor, signedTx, walletInput, type SignedTx, type Utxo } from './wallet-tx.ts';

export interface CpfpParams {
  /** The wallet key the unmined output pays (key-path P2TR). */
  privateKey: Uint8Array;
  network: string;
  /** The unmined output to spend. */
  utxo: Utxo;
  /** Virtual size and (modified) fees of the output's transaction together with its unmined ancestors. */
  ancestorVsize: number;
  ancestorFee: bigint;
  /** sat/vB the whole package (ancestors and child) should pay. */
  feeRate: bigint;
  /** Where the child pays the output's value minus its fee (the wallet). */
  to: string;
}

/**
 * A child spending one unmined wallet output to `to` whose fee lifts its unmined ancestors and itself
 * to `feeRate`: rate × (ancestors + child) minus what the ancestors already pay, and never less than
 * the child's own size at that rate. Undefined when the output cannot pay that fee above the dust limit.
 */
export function buildCpfpTx(params: CpfpParams): (SignedTx & { output: Utxo }) | undefined {
  const { utxo, feeRate, network } = params;
  checkFeeRate(feeRate);
  const input = walletInput(utxo, params.privateKey, network);
  const script = addressScript(params.to, network);
  const childVsize = buildTx([input], [{ script, amount: utxo.value }], true).vsize;
  const forPackage = feeFor(feeRate, params.ancestorVsize + childVsize) - params.ancestorFee;
  const fee = forPackage > feeFor(feeRate, childVsize) ? forPackage : feeFor(feeRate, childVsize);
  const amount = utxo.value - fee;
  if (amount < dustThreshold(script, network)) return undefined;
  const tx = signedTx(buildTx([input], [{ script, amount }]));
  return { ...tx, output: { txid: tx.txid, vout: 0, value: amount } };
}
