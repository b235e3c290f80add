import { createPublicClient, erc20Abi, getAddress, http, isAddressEqual, maxUint256, toHex, type Address, type Hex, type PublicClient } from 'viem';
import { evmChainId } from './index.ts';
import { evmOrderId } from './order-id.ts';
import type { Asset, Chain, Registry } from '../registry.ts';
import { describeChainError } from './chain-errors.ts';
import { readHtlcOrder, ZERO_ADDRESS, type OnChainHtlcOrder } from './htlc-reads.ts';
import type { JobPayload } from './jobs.ts';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { findJob } from '../../store/relayer-jobs.ts';
import { EnqueueBatch } from '../../solver/enqueue-batch.ts';
import type { SolverChain, SourceCheck } from '../../solver/solver.ts';

interface EvmSide {
  asset: Asset;
  htlc: Address;
  native: boolean;
  orderId: Hex;
}

/**
 * The solver on one EVM chain: reads HTLC orders from the registry's contracts, and writes each of
 * its transactions as a job of the durable queue (signer `solver`), which the chain's solver sender
 * signs and broadcasts with consecutive nonces. Nothing here waits for a transaction: a pass decides
 * and enqueues, and the watcher records what is mined. A job's key is its order and action, so a pass
 * run again (after a crash, or while the transaction is pending) enqueues nothing twice.
 */
export class EvmSolverChain implements SolverChain {
  readonly address: Address;
  /** viem's errors repeat the call's arguments: a revert is shown by its error name, a long hex string cut. */
  readonly describeError = describeChainError;
  private readonly client: PublicClient;
  /** ERC-20 HTLCs whose unlimited approval is on chain. */
  private readonly approved = new Set<string>();
  private readonly tokens = new Map<Address, Promise<Address>>();
  private readonly jobs: EnqueueBatch;
  private headRead: Promise<bigint> | undefined;

  constructor(
    readonly chain: Chain,
    private readonly registry: Registry,
    address: Address,
    rpcUrl: string,
    private readonly db: Db,
  ) {
    if (chain.family !== 'evm') throw new Error(`${chain.key} is not an EVM chain`);
    this.address = getAddress(address);
    this.jobs = new EnqueueBatch(db);
    // Batched: the reads of the orders a pass handles at once travel in one HTTP request.
    this.client = createPublicClient({ transport: http(rpcUrl, { batch: true }), cacheTime: 0 });
  }

  /** Funded on chain (pending state included), or its funding job is queued or in flight. */
  async destinationFunded(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const [job, onChain] = await Promise.all([findJob(this.db, fundKey(order.id)), readHtlcOrder(this.client, dst.htlc, dst.orderId, 'pending')]);
    return (job !== undefined && job.status !== 'failed') || onChain.initiator !== ZERO_ADDRESS;
  }

  async checkSource(order: OrderRecord): Promise<SourceCheck> {
    const src = this.side(order.source);
    if (!isAddressEqual(getAddress(order.source.redeemer), this.address)) return { problem: 'the source redeemer is not this solver' };
    const expected = evmOrderId({
      chainId: evmChainId(this.chain),
      secretHash: `0x${order.secretHash}`,
      initiator: getAddress(order.source.initiator),
      redeemer: this.address,
      timelock: BigInt(order.source.timelock),
      amount: BigInt(order.source.amount),
      htlc: src.htlc,
    });
    if (expected.slice(2).toLowerCase() !== order.source.swapId.toLowerCase()) return { problem: "the source swap id is not the HTLC order id of the order's terms" };
    const [token, onChain, head] = await Promise.all([
      src.native ? undefined : this.htlcToken(src.htlc),
      readHtlcOrder(this.client, src.htlc, src.orderId),
      this.head(),
    ]);
    if (token && !isAddressEqual(token, getAddress(src.asset.token.address))) return { problem: 'the source HTLC locks another token than the asset' };
    if (onChain.initiator === ZERO_ADDRESS) return { problem: 'the source HTLC order is not on chain' };
    const mismatch = termsMismatch(onChain, order.source, this.address);
    if (mismatch) return { problem: `source HTLC differs from the order: ${mismatch}` };
    if (onChain.fulfilledAt !== 0n) return { problem: 'the source HTLC is already fulfilled' };
    return { blocksLeft: onChain.initiatedAt + onChain.timelock - head };
  }

  checkDestination(order: OrderRecord): string | undefined {
    const dst = this.side(order.destination);
    if (!isAddressEqual(getAddress(order.destination.initiator), this.address)) return 'the destination initiator is not this solver';
    const id = evmOrderId(this.destinationTerms(order, dst));
    if (id.slice(2).toLowerCase() !== order.destination.swapId.toLowerCase()) return "the destination swap id is not the HTLC order id of the destination's terms";
    return undefined;
  }

  async fundDestination(order: OrderRecord, fundBy: Date): Promise<void> {
    const dst = this.side(order.destination);
    const terms = this.destinationTerms(order, dst);
    // A funding queued behind an unmined approval would fail its simulation: the next pass funds.
    if (!dst.native && !(await this.ensureApproval(dst))) throw new Error(`waiting for the solver's approval of ${dst.htlc} to be mined`);
    await this.enqueue(fundKey(order.id), order.id, 'solver-fund', {
      kind: 'fund',
      htlc: dst.htlc,
      redeemer: terms.redeemer,
      timelock: toHex(terms.timelock),
      amount: toHex(terms.amount),
      secretHash: terms.secretHash,
      value: toHex(dst.native ? terms.amount : 0n),
    }, fundBy);
  }

  /**
   * Queues the redeem of one side. The destination's key is the one `PATCH ?action=redeem` uses: one
   * redeem transaction for the client, whoever asks first.
   */
  async redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean> {
    const htlc = this.side(order[side]);
    const onChain = await readHtlcOrder(this.client, htlc.htlc, htlc.orderId, 'pending');
    if (onChain.initiator === ZERO_ADDRESS || onChain.fulfilledAt !== 0n) return false;
    const action = side === 'source' ? 'solver-redeem' : 'redeem';
    return this.enqueue(`${order.id}:${action}`, order.id, action, { kind: 'redeem', htlc: htlc.htlc, orderId: htlc.orderId, secret: `0x${secret.toString('hex')}` });
  }

  async refundDestination(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const onChain = await readHtlcOrder(this.client, dst.htlc, dst.orderId, 'pending');
    if (onChain.initiator === ZERO_ADDRESS || onChain.fulfilledAt !== 0n) return false;
    if (!isAddressEqual(onChain.initiator, this.address)) return false;
    // The refund lands in the next block at the earliest, which must be above initiatedAt + timelock.
    const head = await this.head();
    if (head < onChain.initiatedAt + onChain.timelock) return false;
    return this.enqueue(`${order.id}:solver-refund`, order.id, 'solver-refund', { kind: 'refund', htlc: dst.htlc, orderId: dst.orderId });
  }

  /**
   * The chain's head. Callers at the same moment share one read in flight (a pass checks many
   * orders at once), so a caller may get a read that started at most one round trip before its
   * call; nothing is cached beyond that. Rule 2's 300 s margin dwarfs the block this may miss.
   */
  private head(): Promise<bigint> {
    if (!this.headRead) {
      this.headRead = this.client.getBlockNumber({ cacheTime: 0 });
      const clear = () => (this.headRead = undefined);
      this.headRead.then(clear, clear);
    }
    return this.headRead;
  }

  /** The token an ERC-20 HTLC locks (fixed at its deployment: read once). */
  private htlcToken(htlc: Address): Promise<Address> {
    let token = this.tokens.get(htlc);
    if (!token) {
      token = this.client.readContract({ address: htlc, abi: tokenAbi, functionName: 'token' });
      token.catch(() => this.tokens.delete(htlc));
      this.tokens.set(htlc, token);
    }
    return token;
  }

  /** Whether the ERC-20 HTLC's unlimited approval is on chain; if not, queues it (once). */
  async ensureApproval(dst: { asset: Asset; htlc: Address }): Promise<boolean> {
    if (this.approved.has(dst.htlc)) return true;
    const token = getAddress(dst.asset.token.address);
    const allowance = await this.client.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [this.address, dst.htlc] });
    if (allowance >= maxUint256 / 2n) {
      this.approved.add(dst.htlc);
      return true;
    }
    await this.enqueue(`approve:${this.chain.key}:${token}:${dst.htlc}`, undefined, 'approve', { kind: 'approve', token, spender: dst.htlc });
    return false;
  }

  /** Queues the approvals of every ERC-20 HTLC of the chain, so that the first funding need not wait for one. */
  async prepare(): Promise<void> {
    for (const asset of this.registry.assets) {
      if (asset.chain.key === this.chain.key && asset.isActive && asset.htlc.address !== '' && asset.token.schema !== 'evm:native') {
        await this.ensureApproval({ asset, htlc: getAddress(asset.htlc.address) });
      }
    }
  }

  /**
   * Writes the job (with the others of this turn, in one statement); true when a transaction is now
   * to be sent (a new job, or a failed one asked for again).
   */
  private async enqueue(key: string, orderId: string | undefined, action: string, payload: JobPayload, broadcastBy?: Date): Promise<boolean> {
    const created = await this.jobs.add({ chain: this.chain.key, ...(orderId ? { orderId } : {}), action, idempotencyKey: key, payload, signer: 'solver', ...(broadcastBy ? { broadcastBy } : {}) });
    return created || requeueFailedJob(this.db, key, broadcastBy);
  }

  private destinationTerms(order: OrderRecord, dst: EvmSide) {
    const secretHash: Hex = `0x${order.secretHash}`;
    return {
      chainId: evmChainId(this.chain),
      secretHash,
      initiator: this.address,
      redeemer: getAddress(order.destination.redeemer),
      timelock: BigInt(order.destination.timelock),
      amount: BigInt(order.destination.amount),
      htlc: dst.htlc,
    };
  }

  private side(swap: SwapRecord): EvmSide {
    const asset = this.registry.asset(swap.asset);
    if (!asset || asset.chain.key !== this.chain.key || asset.htlc.address === '') throw new Error(`${swap.asset} has no HTLC contract on ${this.chain.key}`);
    return { asset, htlc: getAddress(asset.htlc.address), native: asset.token.schema === 'evm:native', orderId: `0x${swap.swapId}` };
  }
}

/** The solver's adapters for the EVM chains it has an RPC for. */
export function evmSolverChains(registry: Registry, address: Address, rpcUrls: Readonly<Record<string, string>>, db: Db): EvmSolverChain[] {
  return Object.entries(rpcUrls).flatMap(([key, url]) => {
    const chain = registry.chain(key);
    return chain?.family === 'evm' ? [new EvmSolverChain(chain, registry, address, url, db)] : [];
  });
}

const fundKey = (orderId: string) => `${orderId}:solver-fund`;

const tokenAbi = [{ type: 'function', name: 'token', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] }] as const;

/** Why an on-chain HTLC order differs from the stored swap (initiator, redeemer = solver, amount, timelock). */
export function termsMismatch(onChain: OnChainHtlcOrder, swap: SwapRecord, solver: Address): string | undefined {
  if (!isAddressEqual(onChain.initiator, getAddress(swap.initiator))) return `initiator ${onChain.initiator}`;
  if (!isAddressEqual(onChain.redeemer, solver)) return `redeemer ${onChain.redeemer}`;
  if (onChain.amount !== BigInt(swap.amount)) return `amount ${onChain.amount}, expected ${swap.amount}`;
  if (onChain.timelock !== BigInt(swap.timelock)) return `timelock ${onChain.timelock}, expected ${swap.timelock}`;
  return undefined;
}
