import type { TObject, TString } from '@sinclair/typebox';
import { createHash } from 'node:crypto';
import { hashTypedData, type Address, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';
import { systemClock, unixSeconds, type Clock } from '../../clock.ts';
import { AppError } from '../../errors.ts';
import { sourceTerms } from '../../orders/source-terms.ts';
import { performWith, type ActionBodies, type SecretBody } from '../../relayer/action-bodies.ts';
import { jobKey, liveActionJob, type RelayerAction } from '../../relayer/actions.ts';
import type { Db } from '../../store/database.ts';
import { instantRefundOpen, mayCoSignInstantRefund } from '../../store/instant-refund-gate.ts';
import { leaseIsHeld, solverLeaseName } from '../../store/leases.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { enqueueJob, findJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import type { JobSigner } from '../../store/schema.ts';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { ClientActions } from '../adapter.ts';
import type { Asset, Registry } from '../registry.ts';
import type { HtlcJobPayload } from './job-calls.ts';
import { initiateTypedData, refundTypedData } from './typed-data.ts';

/** What the client actions need of an HTLC order on chain (`orders(orderID)`). */
export interface HtlcOrderState {
  /** An order is stored under the id (its initiator is not the zero address). */
  initiated: boolean;
  initiatedAt: bigint;
  timelock: bigint;
  /** The block it was redeemed or refunded in; 0 while open. */
  fulfilledAt: bigint;
}

/**
 * What differs between the Solidity HTLC families (EVM, Tron) under the same order actions: how
 * addresses are written, how the chain is read, and which initiator signatures are accepted.
 */
export interface HtlcActionsChain<A extends string> {
  /** The chain id of `asset`'s chain as the EIP-712 (TIP-712) domain names it. */
  chainId(asset: Asset): bigint;
  /** An address as stored (order, registry) in the 20-byte form the contract and the typed data use. */
  vm(address: string): Address;
  /** An address as stored, in the form the family's jobs hold it. */
  jobAddress(address: string): A;
  /**
   * `orders(orderId)` of `asset`'s HTLC, at block `at` where the family reads at a block (EVM; Tron
   * reads the head); an AppError `chain_unavailable` when the chain cannot be read.
   */
  readOrder(asset: Asset, orderId: Hex, at?: bigint): Promise<HtlcOrderState>;
  /** The chain's head block number. */
  head(asset: Asset): Promise<bigint>;
  /**
   * Refuses (AppError) a `signature` of `typedData` that is not the initiator's (`initiator` as stored);
   * `what` names the data signed, for the error.
   */
  checkInitiatorSignature(asset: Asset, initiator: string, typedData: TypedDataDefinition, signature: Hex, what: string): Promise<void>;
  /** Refuses (AppError) a gasless initiate the family cannot relay for `asset` (EVM: native ether). */
  refuseInitiate?(asset: Asset): void;
}

type SignatureBody = TObject<{ signature: TString }>;

/** The action bodies of a Solidity HTLC family: a signature for initiate and instant-refund, the secret for redeem. */
export interface HtlcActionBodies extends ActionBodies {
  readonly initiate: SignatureBody;
  readonly redeem: typeof SecretBody;
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  readonly refund: TObject<{}>;
  readonly 'instant-refund': SignatureBody;
}

export interface HtlcClientActionsDeps {
  /** The solver's key on the chain, when this instance holds it: it co-signs instant refunds of sources it redeems. */
  solverSigner?: LocalAccount;
  /** The time order deadlines count by (default: the system clock). */
  clock?: Clock;
}

/** The jobs the client actions write. */
type ActionJob<A extends string> = Exclude<HtlcJobPayload<A>, { kind: 'fund' | 'approve' }>;

/**
 * The order actions on one Solidity HTLC chain (EVM, Tron): each checks the request against the
 * stored order and the chain, then writes the one relayer job of the order and action, which the
 * chain's relayer sender signs and pays for. A repeated or concurrent request gets that same job.
 * The initiator's signature is checked before anything is written.
 */
export class HtlcClientActions<A extends string> implements ClientActions {
  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly chain: HtlcActionsChain<A>,
    bodies: HtlcActionBodies,
    private readonly deps: HtlcClientActionsDeps,
  ) {
    this.perform = performWith(bodies, {
      initiate: (order, body) => this.initiate(order, hexOf(body.signature)),
      redeem: (order, body) => this.redeem(order, hexOf(body.secret)),
      refund: (order) => this.refund(order),
      'instant-refund': (order, body) => this.instantRefund(order, hexOf(body.signature)),
    });
  }

  readonly perform: ClientActions['perform'];

  /**
   * The EIP-712 (TIP-712) digest of Refund(orderId) for the source: what the initiator signs (a raw
   * signature of the digest equals its eth_signTypedData_v4 signature) and sends as PATCH
   * ?action=instant-refund {signature}. 409 once the destination is funded or being funded, as the
   * action itself would answer.
   */
  async instantRefundDigest(order: OrderRecord): Promise<string> {
    const asset = this.assetOf(order.source);
    if (!(await instantRefundOpen(this.db, order.id))) throw instantRefundClosed(order.id);
    return hashTypedData(this.refundData(asset, order.source.swapId));
  }

  private async initiate(order: OrderRecord, signature: Hex): Promise<RelayerJob> {
    const asset = this.assetOf(order.source);
    this.chain.refuseInitiate?.(asset);
    const terms = sourceTerms(order, this.registry)!;
    const typedData = initiateTypedData({
      chainId: this.chain.chainId(asset),
      htlc: this.chain.vm(asset.htlc.address),
      redeemer: this.chain.vm(terms.redeemer),
      timelock: terms.timelock,
      amount: terms.amount,
      secretHash: `0x${terms.secretHash}`,
    });
    await this.chain.checkInitiatorSignature(asset, terms.initiator, typedData, signature, "this order's typed data");
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
    if (onChain?.initiated) throw new AppError('already_initiated', `order ${order.id}: the source is already initiated on chain`);
    return this.enqueue(order, 'initiate', asset, {
      kind: 'initiate',
      htlc: this.chain.jobAddress(asset.htlc.address),
      initiator: this.chain.jobAddress(terms.initiator),
      redeemer: this.chain.jobAddress(terms.redeemer),
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
    if (!onChain.initiated) throw new AppError('not_initiated', `order ${order.id}: the destination is not initiated on chain yet`);
    if (onChain.fulfilledAt !== 0n) throw new AppError('already_settled', `order ${order.id}: the destination is already redeemed or refunded`);
    return this.enqueue(order, 'redeem', asset, { kind: 'redeem', htlc: this.chain.jobAddress(asset.htlc.address), orderId: `0x${order.destination.swapId}`, secret });
  }

  private async refund(order: OrderRecord): Promise<RelayerJob> {
    const asset = this.assetOf(order.source);
    const existing = await liveActionJob(this.db, order.id, 'refund');
    if (existing) return existing;
    const head = await this.chain.head(asset);
    const onChain = await this.openSource(order, asset, head);
    // The contract refunds from block initiatedAt + timelock + 1 on; the transaction lands in head + 1 at best.
    const refundableAt = onChain.initiatedAt + onChain.timelock + 1n;
    if (head + 1n < refundableAt) {
      throw new AppError('not_expired', `order ${order.id}: the source HTLC has not expired: refundable from block ${refundableAt}, the chain is at ${head}`);
    }
    return this.enqueue(order, 'refund', asset, { kind: 'refund', htlc: this.chain.jobAddress(asset.htlc.address), orderId: `0x${order.source.swapId}` });
  }

  private async instantRefund(order: OrderRecord, consent: Hex): Promise<RelayerJob> {
    const asset = this.assetOf(order.source);
    const refund = this.refundData(asset, order.source.swapId);
    // The initiator's consent: its signature of Refund(orderId), as the solver gives the contract.
    await this.chain.checkInitiatorSignature(asset, order.source.initiator, refund, consent, 'Refund(orderId) of this source');
    const existing = await liveActionJob(this.db, order.id, 'instant-refund');
    if (existing) return existing;
    const solver = this.deps.solverSigner;
    if (solver && solver.address !== this.chain.vm(order.source.redeemer)) {
      throw new AppError('unavailable', `instant-refund: the solver key on ${asset.chain.key} is not this order's redeemer`);
    }
    // Without the solver's key here (an API instance), the workers that run the order's solver send the
    // refund from the redeemer's own account, which the contract takes without a signature.
    if (!solver && !(await leaseIsHeld(this.db, solverLeaseName(order.solverId)))) {
      throw new AppError('unavailable', `instant-refund: no instance runs this order's solver (${order.solverId}) on ${asset.chain.key}`);
    }
    await this.openSource(order, asset);
    // Last, after every other check: from here on the solver never funds this destination (rule 5).
    if (!(await mayCoSignInstantRefund(this.db, order.id))) throw instantRefundClosed(order.id);
    const orderId: Hex = `0x${order.source.swapId}`;
    const job = { kind: 'instant-refund' as const, htlc: this.chain.jobAddress(asset.htlc.address), orderId };
    if (!solver) return this.enqueue(order, 'instant-refund', asset, { ...job, signature: '0x' }, 'solver');
    return this.enqueue(order, 'instant-refund', asset, { ...job, signature: await solver.signTypedData(refund) });
  }

  private refundData(asset: Asset, swapId: string) {
    return refundTypedData({ chainId: this.chain.chainId(asset), htlc: this.chain.vm(asset.htlc.address), orderId: `0x${swapId}` });
  }

  /** The source HTLC on chain, which must be initiated and neither redeemed nor refunded. */
  private async openSource(order: OrderRecord, asset: Asset, at?: bigint): Promise<HtlcOrderState> {
    const onChain = await this.htlcOrder(order.source, asset, at);
    if (!onChain.initiated) throw new AppError('not_initiated', `order ${order.id}: the source is not initiated on chain`);
    if (onChain.fulfilledAt !== 0n) throw new AppError('already_settled', `order ${order.id}: the source is already redeemed or refunded`);
    return onChain;
  }

  private assetOf(swap: SwapRecord): Asset {
    const asset = this.registry.asset(swap.asset);
    if (!asset) throw new AppError('internal', `asset ${swap.asset} of a stored order is not in the registry`);
    return asset;
  }

  private htlcOrder(swap: SwapRecord, asset: Asset, at?: bigint): Promise<HtlcOrderState> {
    return this.chain.readOrder(asset, `0x${swap.swapId}`, at);
  }

  private async enqueue(order: OrderRecord, action: RelayerAction, asset: Asset, payload: ActionJob<A>, signer?: JobSigner): Promise<RelayerJob> {
    const key = jobKey(order.id, action);
    const { job } = await enqueueJob(this.db, { chain: asset.chain.key, orderId: order.id, action, idempotencyKey: key, payload, ...(signer ? { signer } : {}) });
    if (job.status !== 'failed') return job;
    await requeueFailedJob(this.db, key);
    return (await findJob(this.db, key)) ?? job;
  }
}

/** A hex field its schema has checked, as 0x-prefixed lower case. */
const hexOf = (value: string): Hex => (value.startsWith('0x') ? value : `0x${value}`).toLowerCase() as Hex;

const instantRefundClosed = (orderId: string) =>
  new AppError('instant_refund_closed', `order ${orderId}: the destination is initiated, so no instant refund: refund after the source timelock`);
