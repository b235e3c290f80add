import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { hex } from '@scure/base';
import { SigHash, Transaction } from '@scure/btc-signer';
import { equalBytes } from '@scure/btc-signer/utils.js';
import { xOnlyPublicKeyOf } from './address.ts';
import { htlcPayment, type HtlcScriptTerms } from './htlc.ts';
import { RBF_SEQUENCE } from './rbf.ts';
import {
  addressScript,
  buildTx,
  checkFeeRate,
  checkPrivateKey,
  checkUtxos,
  dustThreshold,
  feeFor,
  settleChange,
  signedTx,
  unsignedTx,
  walletInput,
  type SignedTx,
  type TxInput,
  type TxOutput,
  type Utxo,
} from './wallet-tx.ts';

/** Which HTLC, which of its outputs, and where its coins go. */
export interface HtlcSpendBase {
  terms: HtlcScriptTerms;
  /** A bitcoin-family network name, e.g. 'litecoin_regtest'. */
  network: string;
  /** Every UTXO of the HTLC address; all are spent. */
  utxos: readonly Utxo[];
  /** The payout address. */
  to: string;
}

export interface HtlcSweepParams extends HtlcSpendBase {
  /** sat/vB */
  feeRate: bigint;
}

/** The sighash type of instant-refund signatures: SIGHASH_SINGLE|ANYONECANPAY. */
export const SACP = SigHash.SINGLE_ANYONECANPAY;

/**
 * The redeemer's spend through the redeem leaf: one output paying every HTLC UTXO minus the fee
 * (rate × vsize) to `to`, its inputs signalling BIP125. Throws unless `secret` is 32 bytes hashing to the terms' secretHash and
 * `redeemerKey` is the terms' redeemer.
 */
export function buildRedeemTx(params: HtlcSweepParams & { secret: Uint8Array; redeemerKey: Uint8Array }): SignedTx {
  const { terms, secret, redeemerKey } = params;
  const { script, controlBlock } = htlcPayment(terms, params.network).spends.redeem;
  if (!(secret instanceof Uint8Array) || secret.length !== 32) {
    throw new Error(`HTLC redeem: the secret must be exactly 32 bytes, got ${secret instanceof Uint8Array ? secret.length : typeof secret}`);
  }
  if (hex.encode(sha256(secret)) !== terms.secretHash.toLowerCase()) {
    throw new Error('HTLC redeem: sha256(secret) does not match the HTLC secretHash');
  }
  checkPartyKey(redeemerKey, terms.redeemer, 'redeemer');
  // Replaceable (BIP125), so a redeem paying a client, with no output to bump it from, can be re-sent at a higher fee.
  return sweep(params, RBF_SEQUENCE, (sign) => [sign(redeemerKey, SigHash.DEFAULT, script), secret, script, controlBlock]);
}

/**
 * The initiator's spend through the refund leaf, valid once every HTLC UTXO is `timelock` blocks
 * deep: each input's nSequence is the timelock (BIP-68 blocks), which CHECKSEQUENCEVERIFY checks.
 * Such a sequence is below 0xfffffffe, so the refund signals BIP125 replaceability as it is.
 */
export function buildRefundTx(params: HtlcSweepParams & { initiatorKey: Uint8Array }): SignedTx {
  const { terms, initiatorKey } = params;
  const { script, controlBlock } = htlcPayment(terms, params.network).spends.refund;
  checkPartyKey(initiatorKey, terms.initiator, 'initiator');
  return sweep(params, Number(terms.timelock), (sign) => [sign(initiatorKey, SigHash.DEFAULT, script), script, controlBlock]);
}

function sweep(params: HtlcSweepParams, sequence: number | undefined, witness: TxInput['witness']): SignedTx {
  const { network, utxos, feeRate } = params;
  checkUtxos(utxos, 'HTLC');
  checkFeeRate(feeRate);
  const htlcScript = htlcPayment(params.terms, network).script;
  const payout = addressScript(params.to, network);
  const inputs = utxos.map((u): TxInput => ({ ...outpoint(u), sequence, prevout: { script: htlcScript, amount: u.value }, witness }));
  const total = utxos.reduce((sum, u) => sum + u.value, 0n);
  const fee = feeFor(feeRate, buildTx(inputs, [{ script: payout, amount: total }], true).vsize);
  if (total - fee < dustThreshold(payout, network)) {
    throw new Error(`HTLC spend: ${total} sats minus the ${fee} sats fee leaves a dust output`);
  }
  return signedTx(buildTx(inputs, [{ script: payout, amount: total - fee }]));
}

function checkPartyKey(privateKey: Uint8Array, xOnly: string, party: string): void {
  checkPrivateKey(privateKey, party);
  if (xOnlyPublicKeyOf(privateKey) !== xOnly.toLowerCase()) {
    throw new Error(`HTLC: the ${party} private key does not match the HTLC ${party} public key`);
  }
}

function outpoint(u: Utxo): { txid: string; vout: number } {
  return { txid: u.txid.toLowerCase(), vout: u.vout };
}

/**
 * The instant-refund skeleton (garden-facts section 4): version 2, locktime 0, input i = HTLC UTXO i
 * with a final sequence, output i = that UTXO's full value to `to`. With SACP each signature covers
 * only its input and the output of the same index, so the relayer can append a fee input and change.
 */
function instantRefundSkeleton(params: HtlcSpendBase) {
  const { terms, network, utxos } = params;
  checkUtxos(utxos, 'HTLC');
  const payment = htlcPayment(terms, network);
  const payout = addressScript(params.to, network);
  const dust = dustThreshold(payout, network);
  const small = utxos.find((u) => u.value < dust);
  if (small) throw new Error(`HTLC instant refund: the ${small.value} sats UTXO would pay a dust output`);
  return {
    leaf: payment.spends.instantRefund,
    inputs: utxos.map((u) => ({ ...outpoint(u), prevout: { script: payment.script, amount: u.value } })),
    outputs: utxos.map((u): TxOutput => ({ script: payout, amount: u.value })),
  };
}

/**
 * The hex tapscript sighashes (instant-refund leaf, SIGHASH_SINGLE|ANYONECANPAY), one per HTLC UTXO
 * in order, that both parties sign to cancel the swap: what GET /v2/orders/{id}/instant-refund-hash serves.
 */
export function instantRefundSighashes(params: HtlcSpendBase): string[] {
  const { inputs, outputs, leaf } = instantRefundSkeleton(params);
  const tx = unsignedTx(inputs, outputs);
  const scripts = inputs.map((i) => i.prevout.script);
  const amounts = inputs.map((i) => i.prevout.amount);
  return inputs.map((_, idx) => hex.encode(tx.preimageWitnessV1(idx, scripts, SACP, amounts, undefined, leaf.script)));
}

/** Signs instant-refund sighashes (hex) with a party's key: 64-byte BIP-340 signature + 0x83, as hex. */
export function signInstantRefundSighashes(sighashes: readonly string[], privateKey: Uint8Array): string[] {
  checkPrivateKey(privateKey, 'instant refund');
  return sighashes.map((h) => hex.encode(Uint8Array.of(...schnorr.sign(hex.decode(h), privateKey), SACP)));
}

const SACP_SIGNATURE_HEX = /^[0-9a-fA-F]{128}83$/;
const HASH_HEX = /^[0-9a-fA-F]{64}$/;

/**
 * Whether `signature` (hex: 64-byte BIP-340 signature then the 0x83 hash type byte) signs `sighash`
 * (hex) for the x-only public key `xOnlyPublicKey` (hex). Never throws: malformed input is false.
 */
export function verifyInstantRefundSignature(sighash: string, signature: string, xOnlyPublicKey: string): boolean {
  if (typeof signature !== 'string' || !SACP_SIGNATURE_HEX.test(signature)) return false;
  if (typeof sighash !== 'string' || !HASH_HEX.test(sighash)) return false;
  try {
    const sig = hex.decode(signature.toLowerCase()).subarray(0, 64);
    return schnorr.verify(sig, hex.decode(sighash.toLowerCase()), hex.decode(xOnlyPublicKey.toLowerCase()));
  } catch {
    return false;
  }
}

export interface InstantRefundSignatures {
  /** The initiator's (client's) SACP signatures, hex, one per HTLC UTXO in order. */
  initiatorSignatures: readonly string[];
  /** The redeemer's (solver's) SACP signatures, hex, one per HTLC UTXO in order. */
  redeemerSignatures: readonly string[];
}

/**
 * The zero-fee instant-refund transaction: the skeleton with, per input, the witness
 * [redeemerSig, initiatorSig, leaf, controlBlock] (the leaf's first CHECKSIG consumes the top stack
 * item, the initiator's). Throws when a signature is missing or does not verify.
 */
export function assembleInstantRefundTx(params: HtlcSpendBase & InstantRefundSignatures): SignedTx {
  return signedTx(buildTx(instantRefundInputs(params), instantRefundSkeleton(params).outputs));
}

function instantRefundInputs(params: HtlcSpendBase & InstantRefundSignatures): TxInput[] {
  const { terms, initiatorSignatures, redeemerSignatures } = params;
  const { inputs, leaf } = instantRefundSkeleton(params);
  const hashes = instantRefundSighashes(params);
  for (const [party, sigs, key] of [
    ['initiator', initiatorSignatures, terms.initiator],
    ['redeemer', redeemerSignatures, terms.redeemer],
  ] as const) {
    if (sigs.length !== hashes.length) throw new Error(`HTLC instant refund: ${hashes.length} ${party} signatures needed, got ${sigs.length}`);
    hashes.forEach((h, i) => {
      if (!verifyInstantRefundSignature(h, sigs[i] ?? '', key)) throw new Error(`HTLC instant refund: ${party} signature ${i} is invalid`);
    });
  }
  return inputs.map((input, i) => {
    const witness = [hex.decode(redeemerSignatures[i] ?? ''), hex.decode(initiatorSignatures[i] ?? ''), leaf.script, leaf.controlBlock];
    return { ...input, witness: () => witness };
  });
}

export interface InstantRefundFeeParams extends HtlcSpendBase {
  /** The zero-fee instant-refund transaction (hex) from assembleInstantRefundTx. */
  tx: string;
  /** A key-path P2TR UTXO of `feeKey` that pays the fee. */
  feeUtxo: Utxo;
  feeKey: Uint8Array;
  /** sat/vB */
  feeRate: bigint;
  changeAddress: string;
}

/**
 * The instant-refund transaction made to pay `feeRate`: the SACP-signed HTLC inputs and their outputs
 * unchanged, the fee UTXO appended as the last input (SIGHASH_DEFAULT key-path signature) and change
 * as the last output; change below the dust limit is left to the fee. Throws when `tx` is not the
 * instant refund of these terms, UTXOs and payout, or the fee UTXO cannot pay the fee.
 */
export function addInstantRefundFee(params: InstantRefundFeeParams): SignedTx & { change: Utxo | undefined } {
  const { network, feeUtxo, feeKey, feeRate } = params;
  checkFeeRate(feeRate);
  checkUtxos([...params.utxos, feeUtxo], 'HTLC and fee');
  const given = Transaction.fromRaw(hex.decode(params.tx));
  const { inputs, outputs, leaf } = instantRefundSkeleton(params);
  if (!equalBytes(given.unsignedTx, unsignedTx(inputs, outputs).unsignedTx)) {
    throw new Error('HTLC instant refund: the transaction is not the instant refund of these HTLC UTXOs and payout');
  }
  const signatures = inputs.map((_, idx) => {
    const witness = given.getInput(idx).finalScriptWitness ?? [];
    const [redeemerSig, initiatorSig, script, controlBlock] = witness;
    const isLeafSpend = witness.length === 4 && !!script && !!controlBlock && equalBytes(script, leaf.script) && equalBytes(controlBlock, leaf.controlBlock);
    if (!isLeafSpend || !redeemerSig || !initiatorSig) {
      throw new Error(`HTLC instant refund: input ${idx} is not a signed instant-refund spend of this HTLC`);
    }
    return { redeemer: hex.encode(redeemerSig), initiator: hex.encode(initiatorSig) };
  });
  // Re-verifies the signatures: the fee input's signature commits to every input's script and value.
  const htlcInputs = instantRefundInputs({
    ...params,
    initiatorSignatures: signatures.map((s) => s.initiator),
    redeemerSignatures: signatures.map((s) => s.redeemer),
  });
  const allInputs = [...htlcInputs, walletInput(feeUtxo, feeKey, network)];
  const changeScript = addressScript(params.changeAddress, network);
  const settled = settleChange(feeUtxo.value, feeRate, changeScript, network, (change, draft) =>
    buildTx(allInputs, change === undefined ? outputs : [...outputs, { script: changeScript, amount: change }], draft),
  );
  if (!settled) throw new Error(`HTLC instant refund: the ${feeUtxo.value} sats fee UTXO cannot pay the fee at ${feeRate} sat/vB`);
  const result = signedTx(settled.tx);
  return {
    ...result,
    change: settled.change === undefined ? undefined : { txid: result.txid, vout: outputs.length, value: settled.change },
  };
}
