import { address, type Address } from '@solana/kit';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { EnqueueBatch, JobLookup } from '../../solver/job-batches.ts';
import type { SolverChain, SourceCheck } from '../../solver/solver.ts';
import type { Chain, Registry } from '../registry.ts';
import { describeSolanaError } from './chain-errors.ts';
import { solanaSide, type SolanaChainReader, type SolanaSide } from './htlc-state.ts';
import type { SolanaJobPayload } from './jobs.ts';

/**
 * The solver on one Solana chain: reads swap accounts of the registry's HTLC programs, and writes each
 * of its transactions as a job of the durable queue (signer `solver`), which the chain's solver sender
 * signs, pays for and sends. A job's key is its order and action, so a pass run again (after a crash,
 * or while the transaction is in flight) enqueues nothing twice; the programs refuse a second
 * initiate of a swap account, and a second redeem or refund of a closed one.
 */
export class SolanaSolverChain implements SolverChain {
  readonly describeError = describeSolanaError;
  private readonly jobs: EnqueueBatch;
  private readonly jobLookup: JobLookup;

  constructor(
    readonly chain: Chain,
    private readonly registry: Registry,
    readonly address: Address,
    private readonly reader: SolanaChainReader,
    private readonly db: Db,
  ) {
    if (chain.family !== 'solana') throw new Error(`${chain.key} is not a Solana chain`);
    this.jobs = new EnqueueBatch(db);
    this.jobLookup = new JobLookup(db);
  }

  /** Its swap account is on chain, or its funding job is queued or in flight. */
  async destinationFunded(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const [job, onChain] = await Promise.all([this.jobLookup.add(fundKey(order.id)), this.reader.swap(dst, 'processed')]);
    return (job !== undefined && job.status !== 'failed') || onChain !== undefined;
  }

  /** Rule 1 on Solana: the swap account is the order's PDA, owned by the asset's program, with the order's terms. */
  async checkSource(order: OrderRecord): Promise<SourceCheck> {
    const src = this.side(order.source);
    if (order.source.redeemer !== this.address) return { problem: 'the source redeemer is not this solver' };
    if (src.swapId !== order.source.swapId) return { problem: "the source swap id is not the swap account of the order's terms" };
    const [onChain, slot] = await Promise.all([this.reader.swap(src), this.reader.slot()]);
    if (!onChain) return { problem: 'the source swap account is not on chain' };
    const mismatch = termsMismatch(onChain, order.source, this.address);
    if (mismatch) return { problem: `source swap account differs from the order: ${mismatch}` };
    if (src.mint !== undefined) {
      const mint = await this.reader.lockedMint(onChain, order.source.initiateTxHash, src);
      if (mint !== src.mint) return { problem: `the source initiate locked ${mint ?? 'no known token'}, not ${src.mint}` };
    }
    return { blocksLeft: onChain.expirySlot - slot };
  }

  checkDestination(order: OrderRecord): string | undefined {
    if (order.destination.initiator !== this.address) return 'the destination initiator is not this solver';
    if (this.side(order.destination).swapId !== order.destination.swapId) return "the destination swap id is not the swap account of the destination's terms";
    return undefined;
  }

  async fundDestination(order: OrderRecord, fundBy: Date): Promise<void> {
    const dst = this.side(order.destination);
    await this.enqueue(fundKey(order.id), order.id, 'solver-fund', {
      ...dst.ref,
      ...(dst.mint !== undefined ? { sponsor: this.address } : {}),
      kind: 'initiate',
      redeemer: order.destination.redeemer,
      amount: order.destination.amount,
      expiresInSlots: order.destination.timelock,
    }, fundBy);
  }

  /**
   * Queues the redeem of one side (anyone may send a redeem; the solver pays the fee). The
   * destination's key is the one `PATCH ?action=redeem` uses: one redeem for the client, whoever asks first.
   */
  async redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean> {
    const htlc = this.side(order[side]);
    const onChain = await this.reader.swap(htlc, 'processed');
    if (!onChain) return false;
    const action = side === 'source' ? 'solver-redeem' : 'redeem';
    return this.enqueue(`${order.id}:${action}`, order.id, action, {
      ...htlc.ref,
      ...(onChain.sponsor ? { sponsor: onChain.sponsor } : {}),
      kind: 'redeem',
      redeemer: onChain.redeemer,
      secret: secret.toString('hex'),
    });
  }

  async refundDestination(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const [onChain, slot] = await Promise.all([this.reader.swap(dst, 'processed'), this.reader.slot()]);
    if (!onChain || onChain.initiator !== this.address) return false;
    // The program refunds once the current slot is above the expiry slot; the refund lands in a later slot.
    if (slot < onChain.expirySlot) return false;
    return this.enqueue(`${order.id}:solver-refund`, order.id, 'solver-refund', { ...dst.ref, ...(onChain.sponsor ? { sponsor: onChain.sponsor } : {}), kind: 'refund' });
  }

  private side(swap: SwapRecord): SolanaSide {
    return solanaSide(this.registry, this.chain, swap);
  }

  /** Writes the job (with the others of this turn, in one statement); true when a transaction is now to be sent. */
  private async enqueue(key: string, orderId: string, action: string, payload: SolanaJobPayload, broadcastBy?: Date): Promise<boolean> {
    const created = await this.jobs.add({ chain: this.chain.key, orderId, action, idempotencyKey: key, payload, signer: 'solver', ...(broadcastBy ? { broadcastBy } : {}) });
    return created || requeueFailedJob(this.db, key, broadcastBy);
  }
}

const fundKey = (orderId: string) => `${orderId}:solver-fund`;

/** Why an on-chain swap differs from the stored swap (initiator, redeemer = solver, amount, expiry = initiate slot + timelock). */
export function termsMismatch(
  onChain: { initiator: string; redeemer: string; amount: bigint; expirySlot: bigint },
  swap: SwapRecord,
  solver: Address,
): string | undefined {
  if (onChain.initiator !== address(swap.initiator)) return `initiator ${onChain.initiator}`;
  if (onChain.redeemer !== solver) return `redeemer ${onChain.redeemer}`;
  if (onChain.amount !== BigInt(swap.amount)) return `amount ${onChain.amount}, expected ${swap.amount}`;
  const initiatedAt = BigInt(swap.initiateBlockNumber);
  if (initiatedAt === 0n) return 'its initiate is not recorded yet';
  if (onChain.expirySlot !== initiatedAt + BigInt(swap.timelock)) {
    return `expiry slot ${onChain.expirySlot}, expected ${initiatedAt + BigInt(swap.timelock)} (initiate slot ${initiatedAt} + timelock ${swap.timelock})`;
  }
  return undefined;
}
