import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { hex } from '@scure/base';
import { xOnlyPublicKeyOf } from './address.ts';
import { htlcPayment, type HtlcScriptTerms } from './htlc.ts';
import {
  addInstantRefundFee,
  assembleInstantRefundTx,
  buildRedeemTx,
  buildRefundTx,
  instantRefundSighashes,
  signInstantRefundSighashes,
  verifyInstantRefundSignature,
} from './htlc-spend.ts';
import type { BitcoinRpc } from './rpc.ts';
import { clientAddress, swapScriptTerms } from './swap-terms.ts';
import { addressScript, dustThreshold, walletAddress, type SignedTx, type Utxo } from './wallet-tx.ts';
import type { ClientActions } from '../adapter.ts';
import type { Chain, Registry } from '../registry.ts';
import { AppError, conflict, invalid } from '../../errors.ts';
import { performWith } from '../../relayer/action-bodies.ts';
import { BITCOIN_ACTION_BODIES, MAX_SIGNATURES, SacpSignature } from './action-bodies.ts';
import type { SecretBox } from '../../orders/secret-box.ts';
import { openServiceKey } from './service-key.ts';
import { utxosOf, type UtxoRecord } from './store/utxos.ts';
import type { Db } from '../../store/database.ts';
import { delegateKeyCiphertext, setInstantRefundTx, type OrderRecord, type SwapRecord } from '../../store/orders.ts';
import { findJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import { enqueueBitcoinTx, outpointKey, reservedOutpoints, withWalletLock } from './store/jobs.ts';
import { checkClientRefundTx, type CheckedRefund } from './refund-tx-check.ts';
import { checkClientRedeemTx, redeemTxId } from './redeem-tx-check.ts';
import { instantRefundOpen, mayCoSignInstantRefund } from '../../store/instant-refund-gate.ts';
import { jobKey, type RelayerAction } from '../../relayer/actions.ts';
import { feeLadder, type TxVersion } from './rbf.ts';
import { askWorkers, SignedByWorkers, type WorkerWait } from './spend-requests.ts';
import type { Clock } from '../../clock.ts';

/**
 * The client's order actions on Bitcoin-family HTLCs (DESIGN.md section 1; the safety rules of docs/safety.md). A Bitcoin
 * transaction is complete once signed, so each action builds (or checks) the signed transaction here
 * and writes it as the one relayer job of its order and action; the transaction engine broadcasts it.
 * - redeem {secret}: a Bitcoin destination whose key the service holds for the client.
 * - refund {tx}: the client's signed refund of a Bitcoin source after its CSV timelock; without
 *   `tx` the service signs it when it holds the client's key.
 * - instant-refund {signatures}: the client's SIGHASH_SINGLE|ANYONECANPAY signatures of the hashes
 *   of GET /v2/orders/{id}/instant-refund-hash; the solver co-signs under rule 5 and the fee comes
 *   from an input of the solver's wallet.
 * Where the key is one this instance lacks (an API instance's), the worker instances sign it
 * (spend-requests.ts) through the same code.
 * Secrets, keys and signatures never appear in answers or errors (safety rule 7).
 */

/** What the actions on one Bitcoin-family chain use. */
export interface BitcoinActionsDeps {
  /** The chain's node (fee rates, the chain height). */
  rpc: BitcoinRpc;
  /** The solver's 32-byte private key there, when this instance holds it: its x-only key is the redeemer of sources. */
  solverKey?: Uint8Array;
  /** Opens the service-held per-order keys (`orders.delegate_key_ciphertext`); seals what the workers sign. */
  secrets: SecretBox;
  /** How long an action signed by a worker instance is waited for (`DEFAULT_WORKER_WAIT`). */
  workerWait?: Partial<WorkerWait>;
  clock?: Clock;
}

/** One side of an order on a Bitcoin-family chain, with its HTLC's terms. */
interface HtlcSide {
  swap: SwapRecord;
  side: 'source' | 'destination';
  chain: Chain;
  terms: HtlcScriptTerms;
}

const SACP_SIGNATURE = /^(0x)?[0-9a-fA-F]{128}83$/;
const TX_HEX = /^(0x)?(?:[0-9a-fA-F]{2})+$/;


export class BitcoinActions implements ClientActions {
  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly deps: BitcoinActionsDeps,
  ) {}

  /** What GET /v2/orders/{id}/instant-refund-hash serves: one hex sighash per unspent source HTLC output, oldest first. */
  async instantRefundHashes(order: OrderRecord): Promise<string[]> {
    const source = this.htlcSide(order, 'source');
    const utxos = this.aboveDust(order, source, await this.unspentSource(order, source));
    if (!(await instantRefundOpen(this.db, order.id))) throw noInstantRefund(order.id);
    return instantRefundSighashes(this.skeleton(source, utxos));
  }

  /**
   * The client's signatures of the instant-refund hashes, verified against the current hashes and the
   * source delegate key, as its consent to a later instant refund: nothing is co-signed or flagged here.
   */
  async checkInstantRefundConsent(order: OrderRecord, signatures: readonly string[]): Promise<string[]> {
    const given = normalizedSignatures(signatures, 'signatures');
    const source = this.htlcSide(order, 'source');
    const utxos = this.aboveDust(order, source, await this.unspentSource(order, source));
    if (!(await instantRefundOpen(this.db, order.id))) throw noInstantRefund(order.id);
    return this.clientSignatures(order, source, instantRefundSighashes(this.skeleton(source, utxos)), given, false);
  }

  /**
   * The client's own signed redeem of the destination (it keeps the key and the secret), checked
   * (redeem-tx-check.ts) and written as the order's redeem job, which the relayer broadcasts. The same
   * transaction again gets its job; once a redeem is queued, another one gets 409.
   */
  async relayClientRedeem(order: OrderRecord, rawTx: string): Promise<RelayerJob> {
    if (!TX_HEX.test(rawTx)) throw invalid("invalid body field 'redeem_tx_bytes': must be the signed redeem transaction in hex");
    const raw = rawTx.replace(/^0x/, '').toLowerCase();
    const txid = redeemTxId(raw);
    const existing = await this.existingJob(order.id, 'redeem');
    if (existing?.txHash === txid) return existing;
    const destination = this.htlcSide(order, 'destination');
    const all = await utxosOf(this.db, destination.chain.key, destination.swap.swapId);
    if (all.length === 0) throw new AppError('not_initiated', `order ${order.id}: the destination HTLC ${destination.swap.swapId} is not funded yet`);
    const unspent = all.filter((u) => u.spentTxid === null);
    const checked = checkClientRedeemTx(raw, {
      terms: destination.terms,
      network: destination.chain.network,
      utxos: unspent,
      payTo: clientAddress(destination.swap, 'destination'),
    });
    if (existing) throw conflict(`order ${order.id}: its redeem ${existing.txHash} is already queued`);
    return this.enqueue(order, 'redeem', destination, checked, checked.spent);
  }

  /**
   * Performs an action on the Bitcoin-family side it acts on; returns the job of its transaction.
   * One that needs a key this instance lacks is checked as far as it can be here, then performed by a
   * worker instance.
   */
  readonly perform = async (order: OrderRecord, action: RelayerAction, body: unknown): Promise<RelayerJob> => {
    try {
      return await this.performHere(order, action, body);
    } catch (err) {
      if (!(err instanceof SignedByWorkers)) throw err;
      const chain = (action === 'redeem' ? order.destination : order.source).chain;
      return askWorkers(this.db, this.deps.secrets, { order, action, chain, body }, { ...(this.deps.workerWait ? { wait: this.deps.workerWait } : {}), ...(this.deps.clock ? { clock: this.deps.clock } : {}) });
    }
  };

  /** A worker instance's performing of an action another instance handed it: never handed on again. */
  readonly performForwarded = this.performer(false);

  private readonly performHere = this.performer(true);

  /** The actions; `forward`: an action needing a key this instance lacks throws `SignedByWorkers`. */
  private performer(forward: boolean) {
    return performWith(BITCOIN_ACTION_BODIES, {
      redeem: (order, body) => this.redeem(order, body.secret, forward),
      refund: (order, body) => this.refund(order, body.tx === undefined || body.tx === '' ? undefined : body.tx.replace(/^0x/, '').toLowerCase(), forward),
      'instant-refund': (order, body) => this.instantRefund(order, signaturesOf(body), forward),
    });
  }

  /**
   * The solver's instant refund of a failed order with the client's stored consent: the signatures
   * no longer sign the source's hashes when another payment to the HTLC changed them.
   */
  async instantRefundWithConsent(order: OrderRecord, signatures: readonly string[]): Promise<{ job: RelayerJob } | { outdated: string }> {
    try {
      return { job: await this.instantRefund(order, normalizedSignatures(signatures, 'signatures'), false) };
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_signature') return { outdated: err.message };
      throw err;
    }
  }

  private async redeem(order: OrderRecord, secretHex: string, forward: boolean): Promise<RelayerJob> {
    // Safety rule 3: exactly 32 bytes (the body's schema), hashing to the order's secret hash.
    const secret = hex.decode(secretHex.replace(/^0x/, '').toLowerCase());
    if (createHash('sha256').update(secret).digest('hex') !== order.secretHash) {
      throw new AppError('secret_mismatch', "invalid body field 'secret': its sha256 is not the order's secret_hash");
    }
    const existing = await this.existingJob(order.id, 'redeem');
    if (existing) return existing;
    const destination = this.htlcSide(order, 'destination');
    const all = await utxosOf(this.db, destination.chain.key, destination.swap.swapId);
    const unspent = all.filter((u) => u.spentTxid === null);
    if (all.length === 0) throw new AppError('not_initiated', `order ${order.id}: the destination HTLC ${destination.swap.swapId} is not funded yet`);
    if (unspent.length === 0) throw new AppError('already_settled', `order ${order.id}: the destination HTLC is already spent (redeemed or refunded)`);
    // The secret goes public with the redeem: only against a funding that can no longer vanish.
    const mined = unspent.filter((u) => u.blockNumber !== null);
    const minedValue = sum(mined);
    const amount = BigInt(destination.swap.amount);
    if (minedValue < amount) {
      throw new AppError('not_initiated', `order ${order.id}: the destination HTLC holds ${minedValue} of ${amount} sats in mined outputs: redeem once its funding is mined`);
    }
    const { rpc } = this.deps;
    const height = BigInt(await this.node(destination.chain, () => rpc.getBlockCount()));
    const confirmations = height - maxBlock(mined) + 1n;
    if (confirmations < BigInt(destination.swap.requiredConfirmations)) {
      throw new AppError('not_initiated', `order ${order.id}: the destination funding has ${confirmations} of ${destination.swap.requiredConfirmations} confirmations`);
    }
    const key = await this.serviceKey(order, destination, forward);
    if (!key) {
      throw conflict(
        `order ${order.id}: the destination HTLC's redeem key is the client's own (it passed delegate): sign the redeem with that key and broadcast it yourself`,
      );
    }
    const feeRate = await this.node(destination.chain, () => rpc.feeRate());
    // Paying the client, with no output to bump it from: replacements at higher fees are signed with it.
    const [tx, ...replacements] = build('redeem', () =>
      feeLadder((rate) => buildRedeemTx({ ...this.skeleton(destination, mined), feeRate: rate, secret, redeemerKey: key }), feeRate),
    );
    return this.enqueue(order, 'redeem', destination, tx, mined, replacements);
  }

  private async refund(order: OrderRecord, given: string | undefined, forward: boolean): Promise<RelayerJob> {
    const existing = await this.existingJob(order.id, 'refund');
    if (existing) return existing;
    const source = this.htlcSide(order, 'source');
    const utxos = await this.unspentSource(order, source);
    const { rpc } = this.deps;
    // The client's signed refund, or the service signs with the client's key it holds.
    const plan: { checked: CheckedRefund } | { key: Uint8Array } =
      given !== undefined
        ? { checked: checkClientRefundTx(given, { terms: source.terms, network: source.chain.network, utxos }) }
        : { key: await this.refundKey(order, source, forward) };
    const minedFrom =
      'checked' in plan ? plan.checked.minedFrom : utxos.some((u) => u.blockNumber === null) ? undefined : maxBlock(utxos) + source.terms.timelock;
    if (minedFrom === undefined) {
      throw new AppError('not_expired', `order ${order.id}: an output of the source HTLC is not mined yet; it is refundable ${source.terms.timelock} blocks after it is`);
    }
    await this.checkRefundable(order, source, rpc, minedFrom);
    let tx: { hex: string; txid: string };
    let replacements: TxVersion[] = [];
    if ('checked' in plan) {
      tx = plan.checked;
    } else {
      const feeRate = await this.node(source.chain, () => rpc.feeRate());
      [tx, ...replacements] = build('refund', () => feeLadder((rate) => buildRefundTx({ ...this.skeleton(source, utxos), feeRate: rate, initiatorKey: plan.key }), feeRate));
    }
    return this.enqueue(order, 'refund', source, tx, utxos, replacements);
  }

  private async instantRefund(order: OrderRecord, given: string[] | undefined, forward: boolean): Promise<RelayerJob> {
    const existing = await this.existingJob(order.id, 'instant-refund');
    if (existing) return existing;
    const source = this.htlcSide(order, 'source');
    const utxos = this.aboveDust(order, source, await this.unspentSource(order, source));
    if (!(await instantRefundOpen(this.db, order.id))) throw noInstantRefund(order.id);
    const skeleton = this.skeleton(source, utxos);
    const hashes = instantRefundSighashes(skeleton);
    const clientSignatures = await this.clientSignatures(order, source, hashes, given, forward);

    const solverKey = this.deps.solverKey;
    if (!solverKey) {
      const why = `instant-refund: no solver key is configured for ${source.chain.key}`;
      throw forward ? new SignedByWorkers(why) : new AppError('unavailable', why);
    }
    if (xOnlyPublicKeyOf(solverKey) !== source.swap.redeemer.toLowerCase()) {
      throw new AppError('unavailable', `instant-refund: the solver key on ${source.chain.key} is not this order's redeemer`);
    }
    const { rpc } = this.deps;
    const feeRate = await this.node(source.chain, () => rpc.feeRate());
    const wallet = walletAddress(solverKey, source.chain.network);
    if ((await this.feeCandidates(this.db, source.chain, wallet)).length === 0) throw noFeeUtxo(source.chain, wallet);
    // Last, after every other check: from here on the solver never funds this destination (rule 5).
    if (!(await mayCoSignInstantRefund(this.db, order.id))) throw noInstantRefund(order.id);
    const zeroFee = assembleInstantRefundTx({ ...skeleton, initiatorSignatures: clientSignatures, redeemerSignatures: signInstantRefundSighashes(hashes, solverKey) });

    // One fee input per wallet at a time: concurrent instant refunds (of any order) never pick the same one.
    const key = jobKey(order.id, 'instant-refund');
    await withWalletLock(this.db, source.chain.key, async (trx) => {
      if (await findJob(trx, key)) return;
      for (const feeUtxo of await this.feeCandidates(trx, source.chain, wallet)) {
        let paid: SignedTx;
        try {
          paid = addInstantRefundFee({ ...skeleton, tx: zeroFee.hex, feeUtxo, feeKey: solverKey, feeRate, changeAddress: wallet });
        } catch (err) {
          if (err instanceof Error && /cannot pay the fee/.test(err.message)) continue;
          throw new AppError('internal', 'instant-refund: the transaction could not be built', { cause: err });
        }
        await enqueueBitcoinTx(trx, {
          chain: source.chain.key,
          orderId: order.id,
          action: 'instant-refund',
          idempotencyKey: key,
          rawTx: paid.hex,
          txid: paid.txid,
          inputs: [...utxos, feeUtxo],
        });
        // What Garden shows as source_swap.instant_refund_tx: the zero-fee, fully signed transaction.
        await setInstantRefundTx(trx, order.id, zeroFee.hex);
        return;
      }
      throw noFeeUtxo(source.chain, wallet);
    });
    return (await findJob(this.db, key))!;
  }

  /** The service-held key a refund without `tx` is signed with; 400 when the client keeps its own. */
  private async refundKey(order: OrderRecord, source: HtlcSide, forward: boolean): Promise<Uint8Array> {
    const key = await this.serviceKey(order, source, forward);
    if (!key) {
      throw invalid(
        "invalid body field 'tx': is required: the source HTLC's refund key is the client's own (it passed delegate), so send the refund transaction signed with it",
      );
    }
    return key;
  }

  /** The client's instant-refund signatures: verified ones from the body, or the service-held key's. */
  private async clientSignatures(order: OrderRecord, source: HtlcSide, hashes: string[], given: string[] | undefined, forward: boolean): Promise<string[]> {
    if (given === undefined) {
      const key = await this.serviceKey(order, source, forward);
      if (!key) {
        throw invalid(
          "invalid body field 'signatures': is required: sign each hash of GET /v2/orders/{id}/instant-refund-hash with the source delegate key (SIGHASH_SINGLE|ANYONECANPAY)",
        );
      }
      return signInstantRefundSighashes(hashes, key);
    }
    if (given.length !== hashes.length) {
      throw new AppError(
        'invalid_signature',
        `invalid body field 'signatures': ${given.length} signature(s) for ${hashes.length} HTLC output(s): sign every hash of GET /v2/orders/${order.id}/instant-refund-hash`,
      );
    }
    given.forEach((signature, i) => {
      if (!verifyInstantRefundSignature(hashes[i]!, signature, source.terms.initiator)) {
        throw new AppError(
          'invalid_signature',
          `invalid body field 'signatures[${i}]': does not sign hash ${i} of GET /v2/orders/${order.id}/instant-refund-hash with the source delegate key`,
        );
      }
    });
    return given;
  }

  /** The wallet's mined, unspent outputs no unsettled job spends, smallest first. */
  private async feeCandidates(db: Db, chain: Chain, wallet: string): Promise<Utxo[]> {
    const reserved = await reservedOutpoints(db, chain.key);
    return (await utxosOf(db, chain.key, wallet, { unspent: true }))
      .filter((u) => u.blockNumber !== null && !reserved.has(outpointKey(u)))
      .sort((a, b) => (a.value === b.value ? 0 : a.value < b.value ? -1 : 1))
      .map(({ txid, vout, value }) => ({ txid, vout, value }));
  }

  private async checkRefundable(order: OrderRecord, source: HtlcSide, rpc: BitcoinRpc, minedFrom: bigint): Promise<void> {
    const height = BigInt(await this.node(source.chain, () => rpc.getBlockCount()));
    // The relayer's broadcast goes into the next block at the earliest.
    if (height + 1n < minedFrom) {
      throw new AppError(
        'not_expired',
        `order ${order.id}: the source HTLC's timelock has not run out: the refund can be mined from block ${minedFrom}, the chain is at ${height}`,
      );
    }
  }

  /** The unspent outputs of the source HTLC, oldest first; 409 when it holds none. */
  private async unspentSource(order: OrderRecord, source: HtlcSide): Promise<UtxoRecord[]> {
    const all = await utxosOf(this.db, source.chain.key, source.swap.swapId);
    if (all.length === 0) throw new AppError('not_initiated', `order ${order.id}: the source HTLC ${source.swap.swapId} is not funded yet`);
    const unspent = all.filter((u) => u.spentTxid === null);
    if (unspent.length === 0) throw new AppError('already_settled', `order ${order.id}: the source HTLC is already spent (redeemed or refunded)`);
    return unspent;
  }

  /**
   * The outputs an instant refund can pay back one for one: each pays its full value to the client,
   * so an output below the payout's dust limit (anyone can send one to the HTLC address) is left out,
   * or nobody could cancel the swap. It stays refundable through the refund leaf.
   */
  private aboveDust(order: OrderRecord, side: HtlcSide, utxos: UtxoRecord[]): UtxoRecord[] {
    const dust = dustThreshold(addressScript(clientAddress(side.swap, side.side), side.chain.network), side.chain.network);
    const kept = utxos.filter((u) => u.value >= dust);
    if (kept.length === 0) throw conflict(`order ${order.id}: every unspent output of the source HTLC is below the dust limit of ${dust}`);
    return kept;
  }

  /** The side's chain and HTLC terms; the terms must give the stored HTLC address. */
  private htlcSide(order: OrderRecord, side: 'source' | 'destination'): HtlcSide {
    const swap = order[side];
    const chain = this.registry.chain(swap.chain);
    if (!chain) throw new AppError('internal', `chain ${swap.chain} of a stored order is not in the registry`);
    if (chain.family !== 'bitcoin') {
      throw invalid(`the ${side} of order ${order.id} is on ${chain.key} (${chain.family}), not a Bitcoin-family chain`);
    }
    const terms = swapScriptTerms(swap, side, order.secretHash);
    let address: string | undefined;
    try {
      address = htlcPayment(terms, chain.network).address;
    } catch (err) {
      throw new AppError('internal', `order ${order.id}: the stored ${side} HTLC terms are invalid`, { cause: err });
    }
    if (address !== swap.swapId) throw new AppError('internal', `order ${order.id}: the ${side} HTLC terms do not give its stored address`);
    return { swap, side, chain, terms };
  }

  /** Where the side's HTLC outputs go when the client is paid, and what they are. */
  private skeleton(side: HtlcSide, utxos: readonly Utxo[]) {
    return {
      terms: side.terms,
      network: side.chain.network,
      utxos: utxos.map(({ txid, vout, value }) => ({ txid, vout, value })),
      to: clientAddress(side.swap, side.side),
    };
  }

  /** The service-held key of the client on this side, when the client gave no delegate of its own. */
  private async serviceKey(order: OrderRecord, side: HtlcSide, forward: boolean): Promise<Uint8Array | undefined> {
    if (forward && !this.deps.secrets.canOpen && (await delegateKeyCiphertext(this.db, order.id))) {
      throw new SignedByWorkers(`order ${order.id}: the key the service holds for the client is opened by the worker instances`);
    }
    try {
      return await openServiceKey(this.db, this.deps.secrets, order.id, side.swap);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('internal', `order ${order.id}: the service-held key cannot be opened`, { cause: err });
    }
  }

  /** A node call; its failure is the node's unavailability, not the caller's fault. */
  private async node<T>(chain: Chain, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw new AppError('chain_unavailable', `the ${chain.key} node did not answer`, { cause: err });
    }
  }

  /** The job of an earlier request: a Bitcoin transaction is fixed once signed, so it is the answer from then on. */
  private existingJob(orderId: string, action: RelayerAction): Promise<RelayerJob | undefined> {
    return findJob(this.db, jobKey(orderId, action));
  }

  private async enqueue(
    order: OrderRecord,
    action: RelayerAction,
    side: HtlcSide,
    tx: { hex: string; txid: string },
    inputs: readonly Utxo[],
    replacements: readonly TxVersion[] = [],
  ): Promise<RelayerJob> {
    const key = jobKey(order.id, action);
    await enqueueBitcoinTx(this.db, { chain: side.chain.key, orderId: order.id, action, idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs, replacements });
    return (await findJob(this.db, key))!;
  }
}

/** The signatures of an instant-refund body, normalized; undefined when it has none (the service-held key signs). */
function signaturesOf(body: Static<typeof BITCOIN_ACTION_BODIES['instant-refund']>): string[] | undefined {
  if ('signatures' in body && body.signatures !== undefined) {
    if ('signature' in body && body.signature !== undefined) throw invalid("invalid body field 'signature': send either signatures or signature, not both");
    return normalizedSignatures(body.signatures, 'signatures');
  }
  if ('signature' in body && body.signature !== undefined) return normalizedSignatures([body.signature], 'signature');
  return undefined;
}

/** Signatures as lower-case hex without 0x; 400 naming the field for one that is not a SIGHASH_SINGLE|ANYONECANPAY signature. */
function normalizedSignatures(signatures: readonly string[], field: string): string[] {
  if (signatures.length === 0 || signatures.length > MAX_SIGNATURES) {
    throw invalid(`invalid body field '${field}': must be an array of 1 to ${MAX_SIGNATURES} signatures, one per HTLC output`);
  }
  return signatures.map((signature, i) => {
    if (!SACP_SIGNATURE.test(signature)) throw invalid(`invalid body field '${field === 'signature' ? field : `${field}[${i}]`}': ${SacpSignature.errorMessage}`);
    return signature.replace(/^0x/, '').toLowerCase();
  });
}

/** Builds a spend; a value too small for the fee is the HTLC's state (409), anything else a fault. */
function build<T>(action: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof Error && /dust/.test(err.message)) throw conflict(`${action}: the HTLC's value cannot pay the network fee`);
    throw new AppError('internal', `${action}: the transaction could not be built`, { cause: err });
  }
}

const noInstantRefund = (orderId: string) =>
  new AppError('instant_refund_closed', `order ${orderId}: the destination is initiated or being funded, so no instant refund: refund after the source timelock`);

const noFeeUtxo = (chain: Chain, wallet: string) =>
  new AppError('unavailable', `instant-refund: the solver's wallet ${wallet} on ${chain.key} has no mined output free to pay the fee`);

const sum = (utxos: readonly Utxo[]): bigint => utxos.reduce((total, u) => total + u.value, 0n);
const maxBlock = (utxos: readonly UtxoRecord[]): bigint => utxos.reduce((m, u) => (u.blockNumber !== null && u.blockNumber > m ? u.blockNumber : m), 0n);
