import { createHash } from 'node:crypto';
import { hashTypedData, recoverTypedDataAddress, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';
import { systemClock, unixSeconds, type Clock } from '../../clock.ts';
import { AppError } from '../../errors.ts';
import { sourceTerms } from '../../orders/source-terms.ts';
import { performWith } from '../../relayer/action-bodies.ts';
import { jobKey, liveActionJob, type RelayerAction } from '../../relayer/actions.ts';
import type { Db } from '../../store/database.ts';
import { instantRefundOpen, mayCoSignInstantRefund } from '../../store/instant-refund-gate.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { enqueueJob, findJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { ClientActions } from '../adapter.ts';
import type { Asset, Registry } from '../registry.ts';
import { initiateTypedData, refundTypedData } from '../solidity-htlc/typed-data.ts';
import { tronToEvmHex } from './address.ts';
import { TRON_ACTION_BODIES } from './action-bodies.ts';
import { isNodeUnreachable } from './chain-errors.ts';
import type { OnChainTronOrder, TronHtlcReader } from './htlc-reads.ts';
import type { TronJobPayload } from './jobs.ts';
import { tronChainId } from './order-id.ts';

export interface TronClientActionsDeps {
  reader: TronHtlcReader;
  /** The time order deadlines count by (default: the system clock). */
  clock?: Clock;
  /** The solver's key on the chain, when this instance holds it: it co-signs instant refunds of sources it redeems. */
  solverSigner?: LocalAccount;
}

/**
 * The order actions on one Tron chain: each checks the request against the stored order and the
 * chain (the TIP-712 signature before anything else), then writes the one relayer job of the order
 * and action, which the chain's relayer sender signs and pays the energy of. A repeated or concurrent
 * request gets that same job.
 */
export class TronClientActions implements ClientActions {
  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly deps: TronClientActionsDeps,
  ) {}

  readonly perform = performWith(TRON_ACTION_BODIES, {
    initiate: (order, body) => this.initiate(order, hexOf(body.signature)),
    redeem: (order, body) => this.redeem(order, hexOf(body.secret)),
    refund: (order) => this.refund(order),
    'instant-refund': (order, body) => this.instantRefund(order, hexOf(body.signature)),
  });

  /** The TIP-712 digest of Refund(orderId) for the source, what the initiator signs to consent to an instant refund. */
  async instantRefundDigest(order: OrderRecord): Promise<string> {
    const asset = this.assetOf(order.source);
    if (!(await instantRefundOpen(this.db, order.id))) throw instantRefundClosed(order.id);
    return hashTypedData(this.refundData(asset, order.source.swapId));
  }

  private async initiate(order: OrderRecord, signature: Hex): Promise<RelayerJob> {
    const asset = this.assetOf(order.source);
    const terms = sourceTerms(order, this.registry)!;
    const typedData = initiateTypedData({
      chainId: tronChainId(asset.chain.id),
      htlc: tronToEvmHex(asset.htlc.address),
      redeemer: tronToEvmHex(terms.redeemer),
      timelock: terms.timelock,
      amount: terms.amount,
      secretHash: `0x${terms.secretHash}`,
    });
    await checkSignature(typedData, signature, terms.initiator, "this order's typed data");
    const existing = await liveActionJob(this.db, order.id, 'initiate');
    if (existing) return existing;
    if (BigInt(order.deadline) < BigInt(unixSeconds(this.deps.clock ?? systemClock))) {
      throw new AppError('deadline_passed', `order ${order.id}: its deadline ${order.deadline} has passed, the source may no longer be initiated`);
    }
    if (order.source.initiateTxHash !== '') throw new AppError('already_initiated', `order ${order.id}: the source is already initiated`);
    // With the node out of reach the initiate is accepted all the same: its job waits for the node, and
    // its simulation there refuses it if the source was initiated meanwhile.
    const onChain = await this.htlcOrder(order.source, asset).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'chain_unavailable') return undefined;
      throw err;
    });
    if (onChain?.initiator) throw new AppError('already_initiated', `order ${order.id}: the source is already initiated on chain`);
    return this.enqueue(order, 'initiate', asset, {
      kind: 'initiate',
      htlc: asset.htlc.address,
      initiator: terms.initiator,
      redeemer: terms.redeemer,
      timelock: `0x${terms.timelock.toString(16)}`,
      amount: `0x${terms.amount.toString(16)}`,
      secretHash: `0x${terms.secretHash}`,
      signature,
    });
  }

  private async redeem(order: OrderRecord, secret: Hex): Promise<RelayerJob> {
    const asset = this.assetOf(order.destination);
    // Safety rule 3: exactly 32 bytes (the body's schema), hashing to the order's secret hash.
    if (createHash('sha256').update(Buffer.from(secret.slice(2), 'hex')).digest('hex') !== order.secretHash) {
      throw new AppError('secret_mismatch', "invalid body field 'secret': its sha256 is not the order's secret_hash");
    }
    const existing = await liveActionJob(this.db, order.id, 'redeem');
    if (existing) return existing;
    const onChain = await this.htlcOrder(order.destination, asset);
    if (!onChain.initiator) throw new AppError('not_initiated', `order ${order.id}: the destination is not initiated on chain yet`);
    if (onChain.fulfilledAt !== 0n) throw new AppError('already_settled', `order ${order.id}: the destination is already redeemed or refunded`);
    return this.enqueue(order, 'redeem', asset, { kind: 'redeem', htlc: asset.htlc.address, orderId: `0x${order.destination.swapId}`, secret });
  }

  private async refund(order: OrderRecord): Promise<RelayerJob> {
    const asset = this.assetOf(order.source);
    const existing = await liveActionJob(this.db, order.id, 'refund');
    if (existing) return existing;
    const head = await this.unavailableIfDown(asset, () => this.deps.reader.api.nowBlock());
    const onChain = await this.openSource(order, asset);
    // The contract refunds from block initiatedAt + timelock + 1 on; the transaction lands in head + 1 at best.
    const refundableAt = onChain.initiatedAt + onChain.timelock + 1n;
    if (head.number + 1n < refundableAt) {
      throw new AppError('not_expired', `order ${order.id}: the source HTLC has not expired: refundable from block ${refundableAt}, the chain is at ${head.number}`);
    }
    return this.enqueue(order, 'refund', asset, { kind: 'refund', htlc: asset.htlc.address, orderId: `0x${order.source.swapId}` });
  }

  private async instantRefund(order: OrderRecord, consent: Hex): Promise<RelayerJob> {
    const asset = this.assetOf(order.source);
    const refund = this.refundData(asset, order.source.swapId);
    // The initiator's consent: its signature of Refund(orderId), as the solver gives the contract.
    await checkSignature(refund, consent, order.source.initiator, 'Refund(orderId) of this source');
    const existing = await liveActionJob(this.db, order.id, 'instant-refund');
    if (existing) return existing;
    const solver = this.deps.solverSigner;
    if (!solver) throw new AppError('unavailable', `instant-refund: no solver key is configured for ${asset.chain.key}`);
    if (solver.address !== tronToEvmHex(order.source.redeemer)) {
      throw new AppError('unavailable', `instant-refund: the solver key on ${asset.chain.key} is not this order's redeemer`);
    }
    await this.openSource(order, asset);
    // Last, after every other check: from here on the solver never funds this destination (rule 5).
    if (!(await mayCoSignInstantRefund(this.db, order.id))) throw instantRefundClosed(order.id);
    const signature = await solver.signTypedData(refund);
    return this.enqueue(order, 'instant-refund', asset, { kind: 'instant-refund', htlc: asset.htlc.address, orderId: `0x${order.source.swapId}`, signature });
  }

  private refundData(asset: Asset, swapId: string) {
    return refundTypedData({ chainId: tronChainId(asset.chain.id), htlc: tronToEvmHex(asset.htlc.address), orderId: `0x${swapId}` });
  }

  /** The source HTLC on chain, which must be initiated and neither redeemed nor refunded. */
  private async openSource(order: OrderRecord, asset: Asset): Promise<OnChainTronOrder> {
    const onChain = await this.htlcOrder(order.source, asset);
    if (!onChain.initiator) throw new AppError('not_initiated', `order ${order.id}: the source is not initiated on chain`);
    if (onChain.fulfilledAt !== 0n) throw new AppError('already_settled', `order ${order.id}: the source is already redeemed or refunded`);
    return onChain;
  }

  private assetOf(swap: SwapRecord): Asset {
    const asset = this.registry.asset(swap.asset);
    if (!asset) throw new AppError('internal', `asset ${swap.asset} of a stored order is not in the registry`);
    return asset;
  }

  private htlcOrder(swap: SwapRecord, asset: Asset): Promise<OnChainTronOrder> {
    return this.unavailableIfDown(asset, () => this.deps.reader.order(asset.htlc.address, `0x${swap.swapId}`));
  }

  private async unavailableIfDown<T>(asset: Asset, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('chain_unavailable', `cannot read the HTLC on ${asset.chain.key}${isNodeUnreachable(err) ? ': its node is out of reach' : ''}`, { cause: err });
    }
  }

  private async enqueue(order: OrderRecord, action: RelayerAction, asset: Asset, payload: TronJobPayload): Promise<RelayerJob> {
    const key = jobKey(order.id, action);
    const { job } = await enqueueJob(this.db, { chain: asset.chain.key, orderId: order.id, action, idempotencyKey: key, payload });
    if (job.status === 'failed') await requeueFailedJob(this.db, key);
    return (await findJob(this.db, key)) ?? job;
  }
}

/**
 * `party` (base58) signed `typedData` by ECDSA (TIP-712 = EIP-712 over 20-byte addresses), checked
 * before anything is written or sent. Contract initiators (TIP-1271) are not accepted here.
 */
async function checkSignature(typedData: TypedDataDefinition, signature: Hex, party: string, what: string): Promise<void> {
  let signer: string;
  try {
    signer = await recoverTypedDataAddress({ ...typedData, signature });
  } catch {
    throw new AppError('invalid_signature', "invalid body field 'signature': not a valid secp256k1 signature");
  }
  const expected = tronToEvmHex(party);
  if (signer !== expected) {
    throw new AppError('invalid_signature', `invalid body field 'signature': not signed by the source initiator ${party} over ${what}`);
  }
}

/** A hex field its schema has checked, as 0x-prefixed lower case. */
const hexOf = (value: string): Hex => (value.startsWith('0x') ? value : `0x${value}`).toLowerCase() as Hex;

const instantRefundClosed = (orderId: string) =>
  new AppError('instant_refund_closed', `order ${orderId}: the destination is initiated, so no instant refund: refund after the source timelock`);
