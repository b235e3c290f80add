import { sha256 } from '@noble/hashes/sha2.js';
import { hex } from '@scure/base';
import { Transaction } from '@scure/btc-signer';
import { equalBytes } from '@scure/btc-signer/utils.js';
import { htlcPayment, type HtlcScriptTerms } from './htlc.ts';
import { verifies } from './refund-tx-check.ts';
import { addressScript, type Utxo } from './wallet-tx.ts';
import { invalid } from '../../errors.ts';

/**
 * Checks a client's own signed redeem of a Bitcoin-family destination HTLC (Garden's SDK posts it to
 * /relayer/bitcoin/redeem when the client keeps the destination key and the secret) before the relayer
 * takes it: every input is an unspent output of this order's destination HTLC, spent through the redeem
 * leaf with the secret whose sha256 is the order's secret hash and a signature of the redeemer key that
 * verifies; every output pays the destination owner; the fee is at least 1 sat/vB. Every failure is a
 * 400 naming `redeem_tx_bytes`.
 */

export interface CheckedRedeem {
  hex: string;
  txid: string;
  /** The HTLC outputs it spends. */
  spent: Utxo[];
}

const bad = (problem: string) => invalid(`invalid body field 'redeem_tx_bytes': ${problem}`);

/** The txid of a serialized transaction; a 400 naming `redeem_tx_bytes` when it is not one. */
export function redeemTxId(rawHex: string): string {
  return parse(rawHex).id;
}

export function checkClientRedeemTx(
  rawHex: string,
  params: { terms: HtlcScriptTerms; network: string; utxos: readonly Utxo[]; payTo: string },
): CheckedRedeem {
  const { terms, network, utxos, payTo } = params;
  const tx = parse(rawHex);
  if (tx.inputsLength === 0) throw bad('has no inputs');
  if (tx.outputsLength === 0) throw bad('has no outputs');
  const byOutpoint = new Map(utxos.map((u) => [`${u.txid.toLowerCase()}:${u.vout}`, u]));
  const spent: Utxo[] = [];
  for (let i = 0; i < tx.inputsLength; i++) {
    const input = tx.getInput(i);
    const outpoint = `${hex.encode(input.txid ?? new Uint8Array())}:${input.index}`;
    const utxo = byOutpoint.get(outpoint);
    if (!utxo) throw bad(`input ${i} (${outpoint}) is not an unspent output of this order's destination HTLC`);
    if (spent.includes(utxo)) throw bad(`input ${i} spends ${outpoint} twice`);
    spent.push(utxo);
  }

  const payment = htlcPayment(terms, network);
  const { script: leaf, controlBlock } = payment.spends.redeem;
  const scripts = spent.map(() => payment.script);
  const amounts = spent.map((u) => u.value);
  const secretHash = hex.decode(terms.secretHash);
  for (let i = 0; i < spent.length; i++) {
    const witness = tx.getInput(i).finalScriptWitness ?? [];
    const [signature, secret, script, block] = witness;
    if (witness.length !== 4 || !signature || !secret || !script || !block || !equalBytes(script, leaf) || !equalBytes(block, controlBlock)) {
      throw bad(`input ${i} must spend through the HTLC's redeem leaf: witness [signature, secret, redeem leaf, control block]`);
    }
    if (secret.length !== 32 || !equalBytes(sha256(secret), secretHash)) throw bad(`input ${i}: the secret's sha256 is not the order's secret_hash`);
    if (!verifies(tx, i, signature, scripts, amounts, leaf, terms.redeemer)) {
      throw bad(`input ${i}: the signature does not verify against the destination redeemer key`);
    }
  }

  const owner = addressScript(payTo, network);
  let paid = 0n;
  for (let i = 0; i < tx.outputsLength; i++) {
    const output = tx.getOutput(i);
    if (!output.script || !equalBytes(output.script, owner)) throw bad(`output ${i} does not pay the destination owner ${payTo}`);
    paid += output.amount ?? 0n;
  }
  const fee = amounts.reduce((a, b) => a + b, 0n) - paid;
  if (fee < BigInt(tx.vsize)) throw bad(`pays ${paid} of the HTLC's ${fee + paid} sats, leaving a fee below 1 sat/vB for its ${tx.vsize} vB`);
  return { hex: tx.hex, txid: tx.id, spent };
}

function parse(rawHex: string): Transaction {
  try {
    return Transaction.fromRaw(hex.decode(rawHex), { allowUnknownOutputs: true, allowUnknownInputs: true, disableScriptCheck: true });
  } catch {
    throw bad('not a serialized signed transaction');
  }
}
