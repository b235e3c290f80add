import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { Address, OutScript, p2tr, SigHash, Transaction } from '@scure/btc-signer';
import { concatBytes, taprootTweakPrivKey } from '@scure/btc-signer/utils.js';
import { bitcoinNetwork } from './network.ts';

/** A transaction output's reference. */
export interface Outpoint {
  txid: string;
  vout: number;
}

/** An unspent output and its value in satoshis. */
export interface Utxo extends Outpoint {
  value: bigint;
}

/** A transaction output: the locking script and the amount in satoshis. */
export interface TxOutput {
  script: Uint8Array;
  amount: bigint;
}

/**
 * Signs the input being built with `privateKey`: a BIP-340 signature of the input's BIP-341 sighash
 * for `hashType` (a script-path one when `leafScript` is given), the hash type byte appended unless
 * it is SIGHASH_DEFAULT.
 */
export type InputSigner = (privateKey: Uint8Array, hashType: number, leafScript?: Uint8Array) => Uint8Array;

/** An input of a transaction being built: what it spends. */
export interface UnsignedInput extends Outpoint {
  /** nSequence; final (0xffffffff) when absent. */
  sequence?: number;
  /** The output it spends, which taproot sighashes commit to. */
  prevout: TxOutput;
}

/** An input and how to make its witness. */
export interface TxInput extends UnsignedInput {
  witness(sign: InputSigner): Uint8Array[];
}

/** A signed transaction ready for `sendrawtransaction`. */
export interface SignedTx {
  hex: string;
  txid: string;
  vsize: number;
  /** Inputs minus outputs, in satoshis. */
  fee: bigint;
}

const FINAL_SEQUENCE = 0xffffffff;

/**
 * Dust relay fee rates (sat/kvB) of the node software of each network family: Litecoin Core's is ten
 * times Bitcoin Core's, so its dust limits are too (5460 sats for P2PKH, 3300 for P2TR).
 */
const DUST_RELAY_FEE_PER_KVB: Readonly<Record<string, bigint>> = Object.freeze({
  bitcoin: 3000n,
  bitcoin_testnet: 3000n,
  bitcoin_regtest: 3000n,
  litecoin: 30000n,
  litecoin_testnet: 30000n,
  litecoin_regtest: 30000n,
});

/**
 * The smallest amount an output with `script` may carry and still be relayed on `network` (Bitcoin
 * Core's GetDustThreshold: the cost, at the dust relay fee, of the output plus an input spending it).
 */
export function dustThreshold(script: Uint8Array, network: string): bigint {
  bitcoinNetwork(network);
  const rate = DUST_RELAY_FEE_PER_KVB[network];
  if (rate === undefined) throw new Error(`no dust relay fee known for network ${JSON.stringify(network)}`);
  const outputSize = 8 + compactSizeLength(script.length) + script.length;
  // A witness input costs 32+4+1+(107/4)+4 vbytes, a legacy one 32+4+1+107+4.
  const spendSize = isWitnessProgram(script) ? 67 : 148;
  return (BigInt(outputSize + spendSize) * rate) / 1000n;
}

function compactSizeLength(n: number): number {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : 5;
}

function isWitnessProgram(script: Uint8Array): boolean {
  const version = script[0];
  if (script.length < 4 || script.length > 42 || version === undefined) return false;
  if (version !== 0 && (version < 0x51 || version > 0x60)) return false;
  return script[1] === script.length - 2;
}

/** The output script paying `address`; throws when it is not an address of `network`. */
export function addressScript(address: string, network: string): Uint8Array {
  try {
    return OutScript.encode(Address(bitcoinNetwork(network)).decode(address));
  } catch (err) {
    throw new Error(`not a ${network} address: ${JSON.stringify(address)} (${(err as Error).message})`, { cause: err });
  }
}

/** The key-path-only P2TR output of a wallet key: the BIP-86-style tweak of its x-only public key. */
export function walletPayment(privateKey: Uint8Array, network: string) {
  checkPrivateKey(privateKey, 'wallet');
  return p2tr(schnorr.getPublicKey(privateKey), undefined, bitcoinNetwork(network));
}

/** The bech32m address of a key-path P2TR wallet key. */
export function walletAddress(privateKey: Uint8Array, network: string): string {
  checkPrivateKey(privateKey, 'wallet');
  return keyPathAddress(schnorr.getPublicKey(privateKey), network);
}

/** The bech32m key-path P2TR address of an x-only public key (what a wallet key receives on). */
export function keyPathAddress(xOnly: Uint8Array, network: string): string {
  const { address } = p2tr(xOnly, undefined, bitcoinNetwork(network));
  if (!address) throw new Error('wallet address: network has no bech32 prefix');
  return address;
}

/** A key-path spend of a UTXO of the wallet key (SIGHASH_DEFAULT; final sequence unless one is given). */
export function walletInput(utxo: Utxo, privateKey: Uint8Array, network: string, sequence?: number): TxInput {
  const { script } = walletPayment(privateKey, network);
  const tweaked = taprootTweakPrivKey(privateKey);
  return {
    txid: utxo.txid,
    vout: utxo.vout,
    ...(sequence !== undefined ? { sequence } : {}),
    prevout: { script, amount: utxo.value },
    witness: (sign) => [sign(tweaked, SigHash.DEFAULT)],
  };
}

/** Throws unless `key` is a 32-byte secp256k1 private key. */
export function checkPrivateKey(key: Uint8Array, who: string): void {
  if (!(key instanceof Uint8Array) || key.length !== 32 || !secp256k1.utils.isValidSecretKey(key)) {
    throw new Error(`${who} private key: must be 32 bytes, a valid secp256k1 secret key`);
  }
}

/** Throws unless `rate` is a whole number of sat/vB of at least 1. */
export function checkFeeRate(rate: bigint): void {
  if (typeof rate !== 'bigint' || rate < 1n) throw new Error('fee rate: must be a bigint of at least 1 sat/vB');
}

const TXID_HEX = /^[0-9a-fA-F]{64}$/;

/** Throws unless `utxos` is a non-empty list of distinct, well-formed UTXOs with positive values. */
export function checkUtxos(utxos: readonly Utxo[], what: string): void {
  if (utxos.length === 0) throw new Error(`${what}: no UTXOs to spend`);
  const seen = new Set<string>();
  for (const u of utxos) {
    if (typeof u.txid !== 'string' || !TXID_HEX.test(u.txid)) throw new Error(`${what}: txid must be 64 hex digits`);
    if (!Number.isInteger(u.vout) || u.vout < 0 || u.vout > 0xffffffff) throw new Error(`${what}: bad vout ${u.vout}`);
    if (typeof u.value !== 'bigint' || u.value <= 0n) throw new Error(`${what}: UTXO value must be a positive bigint`);
    const key = `${u.txid.toLowerCase()}:${u.vout}`;
    if (seen.has(key)) throw new Error(`${what}: UTXO ${key} listed twice`);
    seen.add(key);
  }
}

/** A version-2, locktime-0 transaction without witnesses, for sighashes and comparisons. */
export function unsignedTx(inputs: readonly UnsignedInput[], outputs: readonly TxOutput[]): Transaction {
  const tx = new Transaction({ version: 2, lockTime: 0 });
  for (const input of inputs) {
    tx.addInput({ txid: input.txid, index: input.vout, sequence: input.sequence ?? FINAL_SEQUENCE, witnessUtxo: input.prevout });
  }
  for (const output of outputs) tx.addOutput(output);
  return tx;
}

/**
 * Builds a version-2, locktime-0 transaction and fills in each input's witness. A `draft` has
 * zero-filled signatures of the real length, to measure the vsize without signing: BIP-340
 * signatures are always 64 bytes, so the signed transaction has the same size.
 */
export function buildTx(inputs: readonly TxInput[], outputs: readonly TxOutput[], draft = false): Transaction {
  const tx = unsignedTx(inputs, outputs);
  const scripts = inputs.map((i) => i.prevout.script);
  const amounts = inputs.map((i) => i.prevout.amount);
  // All witnesses are computed before any is set: btc-signer locks a transaction with final inputs.
  const witnesses = inputs.map((input, idx) =>
    input.witness((privateKey, hashType, leafScript) => {
      const suffix = hashType === SigHash.DEFAULT ? new Uint8Array(0) : Uint8Array.of(hashType);
      if (draft) return new Uint8Array(64 + suffix.length);
      const hash = tx.preimageWitnessV1(idx, scripts, hashType, amounts, undefined, leafScript);
      return concatBytes(schnorr.sign(hash, privateKey), suffix);
    }),
  );
  witnesses.forEach((witness, idx) => tx.updateInput(idx, { finalScriptWitness: witness }));
  return tx;
}

/** The hex, txid, vsize and fee of a transaction from buildTx. */
export function signedTx(tx: Transaction): SignedTx {
  return { hex: tx.hex, txid: tx.id, vsize: tx.vsize, fee: tx.fee };
}

/** The fee at `feeRate` sat/vB for a transaction of `vsize` virtual bytes. */
export function feeFor(feeRate: bigint, vsize: number): bigint {
  return feeRate * BigInt(vsize);
}

/**
 * Fits a change output into a transaction whose inputs exceed its other outputs by `surplus`:
 * `build(change)` makes it with a change output of that amount last (none when undefined). The
 * change is the surplus minus rate × vsize; when that would be dust the change output is dropped
 * and the whole surplus is the fee. Undefined when the surplus cannot pay the fee.
 */
export function settleChange(
  surplus: bigint,
  feeRate: bigint,
  changeScript: Uint8Array,
  network: string,
  build: (change: bigint | undefined, draft: boolean) => Transaction,
): { tx: Transaction; change: bigint | undefined } | undefined {
  const feeWithChange = feeFor(feeRate, build(surplus, true).vsize);
  const change = surplus - feeWithChange;
  if (change >= dustThreshold(changeScript, network)) return { tx: build(change, false), change };
  if (surplus >= feeFor(feeRate, build(undefined, true).vsize)) return { tx: build(undefined, false), change: undefined };
  return undefined;
}

export interface WalletTxParams {
  /** The wallet's 32-byte private key; its UTXOs are key-path P2TR outputs of it. */
  privateKey: Uint8Array;
  network: string;
  utxos: readonly Utxo[];
  to: { address: string; amount: bigint };
  /** sat/vB */
  feeRate: bigint;
  changeAddress: string;
  /** Spend the UTXOs in the order given instead of largest first. */
  inOrder?: boolean;
  /**
   * Split the change into up to `outputs` equal outputs of at least `min` each (and of the dust limit),
   * so that later spends need not chain on one unconfirmed output. One change output by default.
   */
  splitChange?: { outputs: number; min: bigint };
  /** nSequence of every input (RBF_SEQUENCE to signal BIP125 replaceability); final when absent. */
  sequence?: number;
}

export interface WalletTx extends SignedTx {
  /** The UTXOs the transaction spends, in input order. */
  spent: Outpoint[];
  /** The first change output (always vout 1), or undefined when the change would have been dust. */
  change: Utxo | undefined;
  /** Every change output (vout 1 onwards). */
  changes: Utxo[];
}

/** `change` cut into at most `outputs` pieces of at least `min`, the remainder on the last (one piece at least). */
export function changePieces(change: bigint, split: { outputs: number; min: bigint } | undefined): bigint[] {
  const wanted = BigInt(Math.max(1, Math.floor(split?.outputs ?? 1)));
  const min = split && split.min > 0n ? split.min : 1n;
  const count = change / min < wanted ? (change / min > 0n ? change / min : 1n) : wanted;
  const piece = change / count;
  return Array.from({ length: Number(count) }, (_, i) => (i === Number(count) - 1 ? change - piece * (count - 1n) : piece));
}

function largestFirst(a: Utxo, b: Utxo): number {
  if (a.value !== b.value) return a.value > b.value ? -1 : 1;
  return a.txid.localeCompare(b.txid) || a.vout - b.vout;
}

/**
 * A signed transaction from a key-path P2TR wallet paying exactly `to.amount` to `to.address` (vout 0),
 * the change to `changeAddress` (vout 1, or vouts 1.. when split) and rate × vsize as fee. Coins are
 * selected largest first (ties by outpoint; or in the order given) until they cover the amount and fee;
 * change below the dust limit goes to the fee.
 * Throws when the UTXOs cannot pay.
 */
export function buildWalletTx(params: WalletTxParams): WalletTx {
  const { privateKey, network, to, feeRate } = params;
  checkPrivateKey(privateKey, 'wallet');
  checkUtxos(params.utxos, 'wallet');
  checkFeeRate(feeRate);
  const target: TxOutput = { script: addressScript(to.address, network), amount: to.amount };
  if (typeof to.amount !== 'bigint' || to.amount < dustThreshold(target.script, network)) {
    throw new Error(`wallet tx: amount must be a bigint of at least the dust limit ${dustThreshold(target.script, network)}`);
  }
  const changeScript = addressScript(params.changeAddress, network);
  const dust = dustThreshold(changeScript, network);
  const split = params.splitChange && { outputs: params.splitChange.outputs, min: params.splitChange.min > dust ? params.splitChange.min : dust };
  const sorted = params.inOrder ? [...params.utxos] : [...params.utxos].sort(largestFirst);
  let total = 0n;
  for (const [index, utxo] of sorted.entries()) {
    total += utxo.value;
    if (total <= to.amount) continue;
    const chosen = sorted.slice(0, index + 1);
    const inputs = chosen.map((utxo) => walletInput(utxo, privateKey, network, params.sequence));
    const settled = settleChange(total - to.amount, feeRate, changeScript, network, (change, draft) =>
      buildTx(inputs, change === undefined ? [target] : [target, ...changePieces(change, split).map((amount) => ({ script: changeScript, amount }))], draft),
    );
    if (!settled) continue;
    const result = signedTx(settled.tx);
    const changes = settled.change === undefined ? [] : changePieces(settled.change, split).map((value, i) => ({ txid: result.txid, vout: 1 + i, value }));
    return { ...result, spent: chosen.map(({ txid, vout }) => ({ txid, vout })), change: changes[0], changes };
  }
  throw new Error(`wallet tx: UTXOs worth ${total} sats cannot pay ${to.amount} plus the fee at ${feeRate} sat/vB`);
}
