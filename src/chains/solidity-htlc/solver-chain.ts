import { toHex, type Hex } from 'viem';
import { EnqueueBatch, JobLookup } from '../../solver/job-batches.ts';
import type { SolverChain, SourceCheck } from '../../solver/solver.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { Asset, Chain, Registry } from '../registry.ts';
import type { HtlcJobPayload } from './job-calls.ts';

/** An HTLC order as `orders(orderID)` stores it, addresses in the family's form; `initiator` undefined when there is none. */
export interface HtlcOrder<A extends string> {
  initiator: A | undefined;
  redeemer: A;
  initiatedAt: bigint;
  timelock: bigint;
  amount: bigint;
  fulfilledAt: bigint;
}

/** The terms an HTLC order id commits to (the secret hash as stored: 64 hex characters, no 0x). */
export interface HtlcTerms<A extends string> {
  secretHash: string;
  initiator: A;
  redeemer: A;
  timelock: bigint;
  amount: bigint;
  htlc: A;
}

/** One side of an order on this chain: the asset, its HTLC and the swap's order id there. */
export interface HtlcSide<A extends string> {
  asset: Asset;
  htlc: A;
  orderId: Hex;
}

type FundJob<A extends string> = Extract<HtlcJobPayload<A>, { kind: 'fund' }>;

/**
 * What differs between the Solidity HTLC families (EVM, Tron) under the same solver decisions: the
 * address form, the reads, the order id, and what a funding job carries. `A` is the family's address
 * form, `P` its job payload.
 */
export interface HtlcSolverAccess<A extends string, P> {
  /** A stored address (order, registry), in the family's form. */
  party(address: string): A;
  /** Whether two addresses in the family's form are the same address. */
  same(a: A, b: A): boolean;
  /** The HTLC's order id of `terms`: lower-case hex, no 0x. */
  orderId(terms: HtlcTerms<A>): string;
  /**
   * `orders(orderID)` of an HTLC; `pending` asks for the state with what the node holds unmined too,
   * where the chain has one (EVM; Tron reads the head).
   */
  order(htlc: A, orderId: Hex, pending: boolean): Promise<HtlcOrder<A>>;
  /** The chain's head block number. */
  head(): Promise<bigint>;
  /**
   * Whether the node's pool holds a transaction of the solver's that no open job of this store holds
   * (false where reads have no pending state).
   */
  foreignPending(): Promise<boolean>;
  /** The token an HTLC locks (fixed at its deployment). */
  token(htlc: A): Promise<A>;
  /** The `owner`'s ERC-20 (TRC-20) allowance to `spender`. */
  allowance(token: A, owner: A, spender: A): Promise<bigint>;
  /** An allowance this large is left alone: the solver's unlimited approval, worn down only by swaps. */
  readonly unlimited: bigint;
  /** Whether `asset`'s HTLC locks a token, which the solver approves and rule 1 checks (false: the chain's native coin). */
  locksToken(asset: Asset): boolean;
  /** The family's funding job (EVM adds the value a native HTLC takes). */
  fundJob(fund: FundJob<A>, side: HtlcSide<A>): P;
  /** Why a funding waits for the approval of `htlc` (the family's word for a transaction on chain). */
  approvalPending(htlc: A): string;
}

/**
 * The solver on one Solidity HTLC chain (EVM, Tron): reads HTLC orders, and writes each of its
 * transactions as a job of the durable queue (signer `solver`), which the chain's solver sender signs
 * and broadcasts. Nothing here waits for a transaction: a pass decides and enqueues, and the watcher
 * records what is on chain. A job's key is its order and action, so a pass run again (after a crash,
 * or while the transaction is pending) enqueues nothing twice.
 */
export class HtlcSolverChain<A extends string, P> implements SolverChain {
  /** Token HTLCs whose unlimited approval is on chain. */
  private readonly approved = new Set<string>();
  private readonly jobs: EnqueueBatch;
  private readonly jobLookup: JobLookup;

  constructor(
    readonly chain: Chain,
    private readonly registry: Registry,
    /** The solver's address, in the family's form. */
    readonly address: A,
    private readonly access: HtlcSolverAccess<A, P>,
    private readonly db: Db,
    readonly describeError: (err: unknown) => string,
  ) {
    this.jobs = new EnqueueBatch(db);
    this.jobLookup = new JobLookup(db);
  }

  /** Funded on chain (in the node's pool too: `current`), or its funding job is queued or in flight. */
  async destinationFunded(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const [job, onChain] = await Promise.all([this.jobLookup.add(fundKey(order.id)), this.current(dst.htlc, dst.orderId)]);
    return (job !== undefined && job.status !== 'failed') || onChain.initiator !== undefined;
  }

  /** Rule 1: the source on chain is the order's: its id from the order's terms, the asset's token, every term equal. */
  async checkSource(order: OrderRecord): Promise<SourceCheck> {
    const src = this.side(order.source);
    const { access } = this;
    if (!access.same(access.party(order.source.redeemer), this.address)) return { problem: 'the source redeemer is not this solver' };
    const expected = access.orderId({
      secretHash: order.secretHash,
      initiator: access.party(order.source.initiator),
      redeemer: this.address,
      timelock: BigInt(order.source.timelock),
      amount: BigInt(order.source.amount),
      htlc: src.htlc,
    });
    if (expected !== order.source.swapId.toLowerCase()) return { problem: "the source swap id is not the HTLC order id of the order's terms" };
    const [token, onChain, head] = await Promise.all([
      access.locksToken(src.asset) ? access.token(src.htlc) : undefined,
      access.order(src.htlc, src.orderId, false),
      access.head(),
    ]);
    if (token !== undefined && !access.same(token, access.party(src.asset.token.address))) return { problem: 'the source HTLC locks another token than the asset' };
    if (onChain.initiator === undefined) return { problem: 'the source HTLC order is not on chain' };
    const mismatch = this.termsMismatch(onChain, onChain.initiator, order.source);
    if (mismatch) return { problem: `source HTLC differs from the order: ${mismatch}` };
    if (onChain.fulfilledAt !== 0n) return { problem: 'the source HTLC is already fulfilled' };
    return { blocksLeft: onChain.initiatedAt + onChain.timelock - head };
  }

  checkDestination(order: OrderRecord): string | undefined {
    const dst = this.side(order.destination);
    if (!this.access.same(this.access.party(order.destination.initiator), this.address)) return 'the destination initiator is not this solver';
    const id = this.access.orderId(this.destinationTerms(order, dst));
    if (id !== order.destination.swapId.toLowerCase()) return "the destination swap id is not the HTLC order id of the destination's terms";
    return undefined;
  }

  async fundDestination(order: OrderRecord, fundBy: Date): Promise<void> {
    const dst = this.side(order.destination);
    const terms = this.destinationTerms(order, dst);
    // A funding queued behind an approval not on chain yet would fail its simulation: the next pass funds.
    if (this.access.locksToken(dst.asset) && !(await this.ensureApproval(dst))) throw new Error(this.access.approvalPending(dst.htlc));
    const fund = this.access.fundJob(
      { kind: 'fund', htlc: dst.htlc, redeemer: terms.redeemer, timelock: toHex(terms.timelock), amount: toHex(terms.amount), secretHash: `0x${terms.secretHash}` },
      dst,
    );
    await this.enqueue(fundKey(order.id), order.id, 'solver-fund', fund, fundBy);
  }

  /**
   * Queues the redeem of one side. The destination's key is the one `PATCH ?action=redeem` uses: one
   * redeem transaction for the client, whoever asks first.
   */
  async redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean> {
    const htlc = this.side(order[side]);
    const onChain = await this.current(htlc.htlc, htlc.orderId);
    if (onChain.initiator === undefined || onChain.fulfilledAt !== 0n) return false;
    const action = side === 'source' ? 'solver-redeem' : 'redeem';
    return this.enqueue(`${order.id}:${action}`, order.id, action, { kind: 'redeem', htlc: htlc.htlc, orderId: htlc.orderId, secret: `0x${secret.toString('hex')}` });
  }

  async refundDestination(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const onChain = await this.access.order(dst.htlc, dst.orderId, true);
    if (onChain.initiator === undefined || onChain.fulfilledAt !== 0n) return false;
    if (!this.access.same(onChain.initiator, this.address)) return false;
    // The refund lands in the next block at the earliest, which must be above initiatedAt + timelock.
    const head = await this.access.head();
    if (head < onChain.initiatedAt + onChain.timelock) return false;
    return this.enqueue(`${order.id}:solver-refund`, order.id, 'solver-refund', { kind: 'refund', htlc: dst.htlc, orderId: dst.orderId });
  }

  /** Whether the token HTLC's unlimited approval is on chain; if not, queues it (once). */
  async ensureApproval(dst: { asset: Asset; htlc: A }): Promise<boolean> {
    if (this.approved.has(dst.htlc)) return true;
    const token = this.access.party(dst.asset.token.address);
    if ((await this.access.allowance(token, this.address, dst.htlc)) >= this.access.unlimited) {
      this.approved.add(dst.htlc);
      return true;
    }
    await this.enqueue(`approve:${this.chain.key}:${token}:${dst.htlc}`, undefined, 'approve', { kind: 'approve', token, spender: dst.htlc });
    return false;
  }

  /** Queues the approvals of every token HTLC of the chain, so that the first funding need not wait for one. */
  async prepare(): Promise<void> {
    for (const asset of this.registry.assets) {
      if (asset.chain.key === this.chain.key && asset.isActive && asset.htlc.address !== '' && this.access.locksToken(asset)) {
        await this.ensureApproval({ asset, htlc: this.access.party(asset.htlc.address) });
      }
    }
  }

  /**
   * An HTLC order as the solver must see it before it writes: what the node's pool will do matters
   * only for the solver's own transactions, and those this store's jobs know of (the job's key keeps a
   * pass from queueing one twice). So the latest block is read, unless the pool holds a transaction of
   * the solver's that no job here holds (another store's, or a dead instance's): then the pending
   * state. On a node such as anvil each read of the pending state executes the whole pool again, and
   * this read is in the path of every funding and redeem.
   */
  private async current(htlc: A, orderId: Hex): Promise<HtlcOrder<A>> {
    const [latest, foreign] = await Promise.all([this.access.order(htlc, orderId, false), this.access.foreignPending()]);
    return foreign ? this.access.order(htlc, orderId, true) : latest;
  }

  /** Why an on-chain HTLC order differs from the stored swap (initiator, redeemer = solver, amount, timelock). */
  private termsMismatch(onChain: HtlcOrder<A>, initiator: A, swap: SwapRecord): string | undefined {
    if (!this.access.same(initiator, this.access.party(swap.initiator))) return `initiator ${initiator}`;
    if (!this.access.same(onChain.redeemer, this.address)) return `redeemer ${onChain.redeemer}`;
    if (onChain.amount !== BigInt(swap.amount)) return `amount ${onChain.amount}, expected ${swap.amount}`;
    if (onChain.timelock !== BigInt(swap.timelock)) return `timelock ${onChain.timelock}, expected ${swap.timelock}`;
    return undefined;
  }

  /**
   * Writes the job (with the others of this turn, in one statement); true when a transaction is now
   * to be sent (a new job, or a failed one asked for again).
   */
  private async enqueue(key: string, orderId: string | undefined, action: string, payload: P | Exclude<HtlcJobPayload<A>, FundJob<A>>, broadcastBy?: Date): Promise<boolean> {
    const created = await this.jobs.add({ chain: this.chain.key, ...(orderId ? { orderId } : {}), action, idempotencyKey: key, payload, signer: 'solver', ...(broadcastBy ? { broadcastBy } : {}) });
    return created || requeueFailedJob(this.db, key, broadcastBy);
  }

  private destinationTerms(order: OrderRecord, dst: HtlcSide<A>): HtlcTerms<A> {
    return {
      secretHash: order.secretHash,
      initiator: this.address,
      redeemer: this.access.party(order.destination.redeemer),
      timelock: BigInt(order.destination.timelock),
      amount: BigInt(order.destination.amount),
      htlc: dst.htlc,
    };
  }

  private side(swap: SwapRecord): HtlcSide<A> {
    const asset = this.registry.asset(swap.asset);
    if (!asset || asset.chain.key !== this.chain.key || asset.htlc.address === '') throw new Error(`${swap.asset} has no HTLC contract on ${this.chain.key}`);
    return { asset, htlc: this.access.party(asset.htlc.address), orderId: `0x${swap.swapId}` };
  }
}

const fundKey = (orderId: string) => `${orderId}:solver-fund`;
