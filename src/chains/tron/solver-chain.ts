import { toHex, type Hex } from 'viem';
import { EnqueueBatch } from '../../solver/enqueue-batch.ts';
import type { SolverChain, SourceCheck } from '../../solver/solver.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { findJob } from '../../store/relayer-jobs.ts';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { Asset, Chain, Registry } from '../registry.ts';
import { describeTronError } from './chain-errors.ts';
import type { OnChainTronOrder, TronHtlcReader } from './htlc-reads.ts';
import type { TronJobPayload } from './jobs.ts';
import { tronOrderId } from './order-id.ts';

interface TronSide {
  asset: Asset;
  htlc: string;
  orderId: Hex;
}

/** An approval this large is left alone: the solver's unlimited approval, worn down only by swaps. */
const UNLIMITED = 2n ** 255n;

/**
 * The solver on one Tron chain: reads HTLC orders with constant calls, and writes each of its
 * transactions as a job of the durable queue (signer `solver`), which the chain's solver sender signs
 * and broadcasts. Nothing here waits for a transaction: a pass decides and enqueues, the watcher
 * records what landed. A job's key is its order and action, so a pass run again enqueues nothing twice.
 */
export class TronSolverChain implements SolverChain {
  readonly describeError = describeTronError;
  private readonly jobs: EnqueueBatch;
  private readonly approved = new Set<string>();

  constructor(
    readonly chain: Chain,
    private readonly registry: Registry,
    /** The solver's base58 address. */
    readonly address: string,
    private readonly reader: TronHtlcReader,
    private readonly db: Db,
  ) {
    if (chain.family !== 'tron') throw new Error(`${chain.key} is not a Tron chain`);
    this.jobs = new EnqueueBatch(db);
  }

  /** Funded on chain, or its funding job is queued or in flight. */
  async destinationFunded(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const [job, onChain] = await Promise.all([findJob(this.db, fundKey(order.id)), this.reader.order(dst.htlc, dst.orderId)]);
    return (job !== undefined && job.status !== 'failed') || onChain.initiator !== undefined;
  }

  /** Rule 1: the source on chain is the order's: its id from the order's terms, the asset's token, every term equal. */
  async checkSource(order: OrderRecord): Promise<SourceCheck> {
    const src = this.side(order.source);
    if (order.source.redeemer !== this.address) return { problem: 'the source redeemer is not this solver' };
    const expected = tronOrderId({
      chainId: this.chain.id,
      secretHash: order.secretHash,
      initiator: order.source.initiator,
      redeemer: this.address,
      timelock: BigInt(order.source.timelock),
      amount: BigInt(order.source.amount),
      htlc: src.htlc,
    });
    if (expected !== order.source.swapId.toLowerCase()) return { problem: "the source swap id is not the HTLC order id of the order's terms" };
    const [token, onChain, head] = await Promise.all([this.reader.token(src.htlc), this.reader.order(src.htlc, src.orderId), this.reader.api.nowBlock()]);
    if (token !== src.asset.token.address) return { problem: 'the source HTLC locks another token than the asset' };
    if (!onChain.initiator) return { problem: 'the source HTLC order is not on chain' };
    const mismatch = termsMismatch(onChain, order.source, this.address);
    if (mismatch) return { problem: `source HTLC differs from the order: ${mismatch}` };
    if (onChain.fulfilledAt !== 0n) return { problem: 'the source HTLC is already fulfilled' };
    return { blocksLeft: onChain.initiatedAt + onChain.timelock - head.number };
  }

  checkDestination(order: OrderRecord): string | undefined {
    const dst = this.side(order.destination);
    if (order.destination.initiator !== this.address) return 'the destination initiator is not this solver';
    const id = tronOrderId({
      chainId: this.chain.id,
      secretHash: order.secretHash,
      initiator: this.address,
      redeemer: order.destination.redeemer,
      timelock: BigInt(order.destination.timelock),
      amount: BigInt(order.destination.amount),
      htlc: dst.htlc,
    });
    if (id !== order.destination.swapId.toLowerCase()) return "the destination swap id is not the HTLC order id of the destination's terms";
    return undefined;
  }

  async fundDestination(order: OrderRecord, fundBy: Date): Promise<void> {
    const dst = this.side(order.destination);
    // A funding queued behind an approval not landed yet would fail its simulation: the next pass funds.
    if (!(await this.ensureApproval(dst))) throw new Error(`waiting for the solver's approval of ${dst.htlc} to land`);
    await this.enqueue(
      fundKey(order.id),
      order.id,
      'solver-fund',
      {
        kind: 'fund',
        htlc: dst.htlc,
        redeemer: order.destination.redeemer,
        timelock: toHex(BigInt(order.destination.timelock)),
        amount: toHex(BigInt(order.destination.amount)),
        secretHash: `0x${order.secretHash}`,
      },
      fundBy,
    );
  }

  /** Queues the redeem of one side; the destination's key is the one `PATCH ?action=redeem` uses. */
  async redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean> {
    const htlc = this.side(order[side]);
    const onChain = await this.reader.order(htlc.htlc, htlc.orderId);
    if (!onChain.initiator || onChain.fulfilledAt !== 0n) return false;
    const action = side === 'source' ? 'solver-redeem' : 'redeem';
    return this.enqueue(`${order.id}:${action}`, order.id, action, { kind: 'redeem', htlc: htlc.htlc, orderId: htlc.orderId, secret: `0x${secret.toString('hex')}` });
  }

  async refundDestination(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const [onChain, head] = await Promise.all([this.reader.order(dst.htlc, dst.orderId), this.reader.api.nowBlock()]);
    if (!onChain.initiator || onChain.fulfilledAt !== 0n || onChain.initiator !== this.address) return false;
    // The refund lands in the next block at the earliest, which must be above initiatedAt + timelock.
    if (head.number < onChain.initiatedAt + onChain.timelock) return false;
    return this.enqueue(`${order.id}:solver-refund`, order.id, 'solver-refund', { kind: 'refund', htlc: dst.htlc, orderId: dst.orderId });
  }

  /** Whether the HTLC's unlimited approval is on chain; if not, queues it (once). */
  async ensureApproval(dst: { asset: Asset; htlc: string }): Promise<boolean> {
    if (this.approved.has(dst.htlc)) return true;
    const token = dst.asset.token.address;
    if ((await this.reader.allowance(token, this.address, dst.htlc)) >= UNLIMITED) {
      this.approved.add(dst.htlc);
      return true;
    }
    await this.enqueue(`approve:${this.chain.key}:${token}:${dst.htlc}`, undefined, 'approve', { kind: 'approve', token, spender: dst.htlc });
    return false;
  }

  /** Queues the approvals of every TRC-20 HTLC of the chain, so that the first funding need not wait for one. */
  async prepare(): Promise<void> {
    for (const asset of this.registry.assets) {
      if (asset.chain.key === this.chain.key && asset.isActive && asset.htlc.address !== '') await this.ensureApproval({ asset, htlc: asset.htlc.address });
    }
  }

  private async enqueue(key: string, orderId: string | undefined, action: string, payload: TronJobPayload, broadcastBy?: Date): Promise<boolean> {
    const created = await this.jobs.add({ chain: this.chain.key, ...(orderId ? { orderId } : {}), action, idempotencyKey: key, payload, signer: 'solver', ...(broadcastBy ? { broadcastBy } : {}) });
    return created || requeueFailedJob(this.db, key, broadcastBy);
  }

  private side(swap: SwapRecord): TronSide {
    const asset = this.registry.asset(swap.asset);
    if (!asset || asset.chain.key !== this.chain.key || asset.htlc.address === '') throw new Error(`${swap.asset} has no HTLC contract on ${this.chain.key}`);
    return { asset, htlc: asset.htlc.address, orderId: `0x${swap.swapId}` };
  }
}

const fundKey = (orderId: string) => `${orderId}:solver-fund`;

/** Why an on-chain HTLC order differs from the stored swap (initiator, redeemer = solver, amount, timelock). */
export function termsMismatch(onChain: OnChainTronOrder, swap: SwapRecord, solver: string): string | undefined {
  if (onChain.initiator !== swap.initiator) return `initiator ${onChain.initiator}`;
  if (onChain.redeemer !== solver) return `redeemer ${onChain.redeemer}`;
  if (onChain.amount !== BigInt(swap.amount)) return `amount ${onChain.amount}, expected ${swap.amount}`;
  if (onChain.timelock !== BigInt(swap.timelock)) return `timelock ${onChain.timelock}, expected ${swap.timelock}`;
  return undefined;
}
