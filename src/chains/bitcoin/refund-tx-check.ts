import { schnorr } from '@noble/curves/secp256k1.js';
import { hex } from '@scure/base';
import { SigHash, Transaction } from '@scure/btc-signer';
import { equalBytes } from '@scure/btc-signer/utils.js';
import { htlcPayment, type HtlcScriptTerms } from './htlc.ts';
import type { Utxo } from './wallet-tx.ts';
import { invalid } from '../../errors.ts';

/**
 * Checks a client's signed refund of a Bitcoin-family source HTLC (PATCH ?action=refund {tx}) before
 * the relayer takes it: it must spend exactly the HTLC's unspent outputs, each through the refund
 * leaf with a signature of the initiator key that verifies, with a sequence that satisfies the
 * leaf's CHECKSEQUENCEVERIFY, and pay a fee. Every failure is a 400 naming `tx`.
 */

/** An HTLC output to refund, with the block it was mined in (null: only in the mempool). */
export interface RefundableUtxo extends Utxo {
  blockNumber: bigint | null;
}

export interface CheckedRefund {
  hex: string;
  txid: string;
  /**
   * The first block the refund can be mined in (BIP-68: each input's block plus its relative lock),
   * or undefined when an output it spends is not mined yet.
   */
  minedFrom: bigint | undefined;
}

/** BIP-68: the disable flag, the time-based flag, and the 16-bit value. */
const SEQUENCE_DISABLE = 0x80000000;
const SEQUENCE_TYPE_TIME = 0x00400000;
const SEQUENCE_VALUE = 0xffff;
const HASH_TYPES = new Set([SigHash.ALL, SigHash.NONE, SigHash.SINGLE, SigHash.ALL_ANYONECANPAY, SigHash.NONE_ANYONECANPAY, SigHash.SINGLE_ANYONECANPAY]);

const bad = (problem: string) => invalid(`invalid body field 'tx': ${problem}`);

export function checkClientRefundTx(rawHex: string, params: { terms: HtlcScriptTerms; network: string; utxos: readonly RefundableUtxo[] }): CheckedRefund {
  const { terms, network, utxos } = params;
  let tx: Transaction;
  try {
    tx = Transaction.fromRaw(hex.decode(rawHex), { allowUnknownOutputs: true, allowUnknownInputs: true, disableScriptCheck: true });
  } catch {
    throw bad('not a serialized signed transaction');
  }
  if (tx.version < 2) throw bad('must be a version 2 transaction (the refund leaf checks a relative timelock)');
  if (tx.outputsLength === 0) throw bad('has no outputs');
  const byOutpoint = new Map(utxos.map((u) => [`${u.txid.toLowerCase()}:${u.vout}`, u]));
  const spent: RefundableUtxo[] = [];
  for (let i = 0; i < tx.inputsLength; i++) {
    const input = tx.getInput(i);
    const utxo = byOutpoint.get(`${hex.encode(input.txid ?? new Uint8Array())}:${input.index}`);
    if (!utxo || spent.includes(utxo)) break;
    spent.push(utxo);
  }
  if (spent.length !== utxos.length || tx.inputsLength !== utxos.length) {
    const list = utxos.map((u) => `${u.txid}:${u.vout}`).join(', ');
    throw bad(`must spend exactly the source HTLC's unspent outputs (${list}) and nothing else`);
  }

  const payment = htlcPayment(terms, network);
  const { script: leaf, controlBlock } = payment.spends.refund;
  const scripts = spent.map(() => payment.script);
  const amounts = spent.map((u) => u.value);
  let minedFrom: bigint | undefined = 0n;
  for (const [i, utxo] of spent.entries()) {
    const input = tx.getInput(i);
    const witness = input.finalScriptWitness ?? [];
    const [signature, script, block] = witness;
    if (witness.length !== 3 || !signature || !script || !block || !equalBytes(script, leaf) || !equalBytes(block, controlBlock)) {
      throw bad(`input ${i} must spend through the HTLC's refund leaf: witness [signature, refund leaf, control block]`);
    }
    const sequence = input.sequence ?? 0xffffffff;
    if ((sequence & SEQUENCE_DISABLE) !== 0 || (sequence & SEQUENCE_TYPE_TIME) !== 0 || BigInt(sequence & SEQUENCE_VALUE) < terms.timelock) {
      throw bad(`input ${i} must have a block-based relative lock (nSequence) of at least the HTLC timelock ${terms.timelock}`);
    }
    if (!verifies(tx, i, signature, scripts, amounts, leaf, terms.initiator)) {
      throw bad(`input ${i}: the signature does not verify against the source initiator key`);
    }
    const lockedUntil = utxo.blockNumber === null ? undefined : utxo.blockNumber + BigInt(sequence & SEQUENCE_VALUE);
    minedFrom = minedFrom === undefined || lockedUntil === undefined ? undefined : max(minedFrom, lockedUntil);
  }

  let paid = 0n;
  for (let i = 0; i < tx.outputsLength; i++) paid += tx.getOutput(i).amount ?? 0n;
  const fee = amounts.reduce((a, b) => a + b, 0n) - paid;
  if (fee < BigInt(tx.vsize)) throw bad(`pays ${paid} of the HTLC's ${fee + paid} sats, leaving a fee below 1 sat/vB for its ${tx.vsize} vB`);
  return { hex: tx.hex, txid: tx.id, minedFrom };
}

/** Whether a tapscript signature (64 bytes, or 65 with its sighash type) of input `idx` through `leaf` verifies against the x-only key. */
export function verifies(tx: Transaction, idx: number, signature: Uint8Array, scripts: Uint8Array[], amounts: bigint[], leaf: Uint8Array, xOnly: string): boolean {
  if (signature.length !== 64 && signature.length !== 65) return false;
  const hashType = signature.length === 64 ? SigHash.DEFAULT : signature[64]!;
  if (signature.length === 65 && !HASH_TYPES.has(hashType)) return false;
  try {
    const hash = tx.preimageWitnessV1(idx, scripts, hashType, amounts, undefined, leaf);
    return schnorr.verify(signature.subarray(0, 64), hash, hex.decode(xOnly.toLowerCase()));
  } catch {
    return false;
  }
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
