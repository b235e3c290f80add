import { setTimeout as sleep } from 'node:timers/promises';
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  getAddress,
  http,
  isAddressEqual,
  sha256,
  type Address,
  type Chain as ViemChain,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { evmChainId } from '../chains/evm/index.ts';
import { evmOrderId } from '../chains/evm/order-id.ts';
import type { Asset, Chain, Registry } from '../chains/registry.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import { readHtlcOrder, ZERO_ADDRESS, type OnChainHtlcOrder } from '../relayer/chain-clients.ts';
import { describeChainError } from '../relayer/chain-errors.ts';
import { htlcAbi, htlcInitiateAbi } from '../chains/evm/htlc-abi.ts';
import { accrueOrderFees } from '../store/affiliates.ts';
import { toRfc3339Seconds, type Db } from '../store/database.ts';
import { findOrder, type OrderRecord, type SwapRecord } from '../store/orders.ts';
import { releaseOrderLiquidity } from '../store/solvers.ts';
import { claimFunding, orderIdsToFund, ordersToAccrue, ordersToRedeemForClient, ordersToRedeemSource, ordersToRefund, secretCiphertext } from './solver-store.ts';

export interface SolverLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface EvmSolverOptions {
  /** Rule 2's margin: the source must have more than destination timelock + this left, in seconds (default 300). */
  marginSeconds?: number;
  /** Pause of `run` between passes (default 1 s). */
  intervalMs?: number;
  /** Orders handled per step and pass (default 50). */
  batch?: number;
  log?: SolverLog;
}

/** What one pass did, by step (transactions sent or records written). */
export interface SolverPass {
  funded: string[];
  redeemedForClient: string[];
  redeemedSources: string[];
  refunded: string[];
  accrued: string[];
  /** Orders left alone on purpose, with the reason (rule 1/2/5, deadline, wrong terms). */
  skipped: Array<{ orderId: string; reason: string }>;
}

const silent: SolverLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface ChainAccess {
  chain: Chain;
  client: PublicClient;
  wallet: WalletClient;
}

/**
 * The solver of the EVM chains it has RPCs for: funds destinations (DESIGN.md safety rules 1, 2, 5),
 * redeems destinations for clients whose secret the service holds, redeems its sources as soon as the
 * secret is on chain (rule 4), and refunds its own expired destinations. It sends its own transactions
 * from its account, one at a time, each after a fresh on-chain check, so a pass re-run after a crash at
 * any point sends nothing that is already done (rule 6).
 */
export class EvmSolver {
  readonly address: Address;
  private readonly chains = new Map<string, ChainAccess>();
  private readonly marginMs: bigint;
  private readonly intervalMs: number;
  private readonly batch: number;
  private readonly log: SolverLog;

  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    readonly solverId: string,
    private readonly account: LocalAccount,
    rpcUrls: Readonly<Record<string, string>>,
    private readonly secrets: SecretBox,
    options: EvmSolverOptions = {},
  ) {
    this.address = account.address;
    this.marginMs = BigInt(Math.round((options.marginSeconds ?? 300) * 1000));
    this.intervalMs = options.intervalMs ?? 1_000;
    this.batch = options.batch ?? 50;
    this.log = options.log ?? silent;
    for (const [key, url] of Object.entries(rpcUrls)) {
      const chain = registry.chain(key);
      if (!chain || chain.family !== 'evm') continue;
      const viemChain: ViemChain = {
        id: Number(evmChainId(chain)),
        name: chain.name,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [url] } },
      };
      const transport = http(url);
      this.chains.set(key, {
        chain,
        client: createPublicClient({ chain: viemChain, transport, cacheTime: 0 }),
        wallet: createWalletClient({ account, chain: viemChain, transport, cacheTime: 0 }),
      });
    }
  }

  /** Runs passes until `signal` aborts; a failed pass is logged and the loop goes on. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.tick();
      } catch (err) {
        this.log.error({ solver: this.solverId, error: describeChainError(err) }, 'solver pass failed');
      }
      await sleep(this.intervalMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /** One pass: redeem sources first (the solver's own money), then client redeems, refunds, funding. */
  async tick(): Promise<SolverPass> {
    const pass: SolverPass = { funded: [], redeemedForClient: [], redeemedSources: [], refunded: [], accrued: [], skipped: [] };
    const chains = [...this.chains.keys()];
    if (chains.length === 0) return pass;
    const q = { solverId: this.solverId, chains, limit: this.batch };
    const each = async (ids: string[], step: (order: OrderRecord) => Promise<void>) => {
      for (const id of ids) {
        const order = await findOrder(this.db, id);
        if (!order) continue;
        try {
          await step(order);
        } catch (err) {
          this.log.error({ order: id, error: describeChainError(err) }, 'solver step failed');
        }
      }
    };
    await each(await ordersToRedeemSource(this.db, q), (o) => this.redeemSource(o, pass));
    await each(await ordersToAccrue(this.db, q), async (o) => {
      if ((await accrueOrderFees(this.db, o.id)) > 0) pass.accrued.push(o.id);
    });
    await each(await ordersToRedeemForClient(this.db, q), (o) => this.redeemForClient(o, pass));
    await each(await ordersToRefund(this.db, q), (o) => this.refundDestination(o, pass));
    await each(await orderIdsToFund(this.db, q), (o) => this.fund(o, pass));
    return pass;
  }

  // ---- 1. funding ----

  private async fund(order: OrderRecord, pass: SolverPass): Promise<void> {
    const skip = (reason: string) => {
      pass.skipped.push({ orderId: order.id, reason });
      this.log.warn({ order: order.id, reason }, 'not funding the destination');
    };
    const src = this.evmSide(order.source);
    const dst = this.evmSide(order.destination);
    if (!src || !dst) return skip('a side is not an EVM chain this solver serves');
    // Already on chain (an earlier pass broadcast it; the watcher has not seen it yet): nothing to send.
    const existing = await readHtlcOrder(dst.access.client, dst.htlc, dst.orderId);
    if (existing.initiator !== ZERO_ADDRESS) {
      await releaseOrderLiquidity(this.db, order.id);
      return;
    }

    // Rule 1: the source HTLC on chain, at the registry's contract, has exactly the order's terms.
    const problem = await this.checkSource(order, src);
    if (problem) return skip(problem);
    const srcOnChain = await readHtlcOrder(src.access.client, src.htlc, src.orderId);
    if (srcOnChain.initiator === ZERO_ADDRESS) return skip('the source HTLC order is not on chain');
    const mismatch = termsMismatch(srcOnChain, order.source, this.address);
    if (mismatch) return skip(`source HTLC differs from the order: ${mismatch}`);
    if (srcOnChain.fulfilledAt !== 0n) return skip('the source HTLC is already fulfilled');
    // A late initiation: the solver does not fill orders whose deadline passed before the source appeared.
    const initiatedAtTime = order.source.initiateTimestamp ? Date.parse(toRfc3339Seconds(order.source.initiateTimestamp)) : NaN;
    if (Number.isFinite(initiatedAtTime) && initiatedAtTime / 1000 > Number(order.deadline)) {
      return skip('the source was initiated after the order deadline');
    }

    // Rule 2: time left on the source, in ms, beyond the destination timelock plus the margin.
    const head = await src.access.client.getBlockNumber({ cacheTime: 0 });
    const leftMs = (srcOnChain.initiatedAt + srcOnChain.timelock - head) * BigInt(src.access.chain.blockTimeMs);
    const needMs = BigInt(order.destination.timelock) * BigInt(dst.access.chain.blockTimeMs) + this.marginMs;
    if (leftMs <= needMs) return skip(`rule 2: the source has ${leftMs / 1000n} s left, the destination needs more than ${needMs / 1000n} s`);

    // The destination we are about to create is the order's destination swap.
    if (!isAddressEqual(getAddress(order.destination.initiator), this.address)) return skip('the destination initiator is not this solver');
    const secretHash: Hex = `0x${order.secretHash}`;
    const dstTerms = {
      chainId: evmChainId(dst.access.chain),
      secretHash,
      initiator: this.address,
      redeemer: getAddress(order.destination.redeemer),
      timelock: BigInt(order.destination.timelock),
      amount: BigInt(order.destination.amount),
      htlc: dst.htlc,
    };
    if (evmOrderId(dstTerms).slice(2).toLowerCase() !== order.destination.swapId.toLowerCase()) {
      return skip("the destination swap id is not the HTLC order id of the destination's terms");
    }

    // Rule 5: record the intent under the row lock, unless an instant refund was co-signed.
    if (!(await claimFunding(this.db, order.id))) return skip('rule 5: the solver co-signed an instant refund of the source');

    const { client, wallet } = dst.access;
    if (dst.native) {
      await this.send(client, () =>
        wallet.writeContract({
          account: this.account,
          chain: wallet.chain,
          address: dst.htlc,
          abi: htlcInitiateAbi,
          functionName: 'initiate',
          args: [dstTerms.redeemer, dstTerms.timelock, dstTerms.amount, dstTerms.secretHash],
          value: dstTerms.amount,
        }),
      );
    } else {
      const token = getAddress(dst.asset.token.address);
      const allowance = await client.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [this.address, dst.htlc] });
      if (allowance < dstTerms.amount) {
        await this.send(client, () =>
          wallet.writeContract({
            account: this.account,
            chain: wallet.chain,
            address: token,
            abi: erc20Abi,
            functionName: 'approve',
            args: [dst.htlc, dstTerms.amount],
          }),
        );
      }
      await this.send(client, () =>
        wallet.writeContract({
          account: this.account,
          chain: wallet.chain,
          address: dst.htlc,
          abi: htlcInitiateAbi,
          functionName: 'initiate',
          args: [dstTerms.redeemer, dstTerms.timelock, dstTerms.amount, dstTerms.secretHash],
          value: 0n,
        }),
      );
    }
    const funded = await readHtlcOrder(client, dst.htlc, dst.orderId);
    if (funded.initiator === ZERO_ADDRESS) throw new Error(`order ${order.id}: the destination initiate was mined but the HTLC order is absent`);
    await releaseOrderLiquidity(this.db, order.id);
    pass.funded.push(order.id);
    this.log.info({ order: order.id, chain: dst.access.chain.key }, 'funded the destination');
  }

  /** Rule 1's static part: the source swap id is the order id of the order's terms at the registry's HTLC. */
  private async checkSource(order: OrderRecord, src: EvmSide): Promise<string | undefined> {
    if (!isAddressEqual(getAddress(order.source.redeemer), this.address)) return 'the source redeemer is not this solver';
    const expected = evmOrderId({
      chainId: evmChainId(src.access.chain),
      secretHash: `0x${order.secretHash}`,
      initiator: getAddress(order.source.initiator),
      redeemer: this.address,
      timelock: BigInt(order.source.timelock),
      amount: BigInt(order.source.amount),
      htlc: src.htlc,
    });
    if (expected.slice(2).toLowerCase() !== order.source.swapId.toLowerCase()) return "the source swap id is not the HTLC order id of the order's terms";
    if (!src.native) {
      const token = await src.access.client.readContract({ address: src.htlc, abi: tokenAbi, functionName: 'token' });
      if (!isAddressEqual(token, getAddress(src.asset.token.address))) return 'the source HTLC locks another token than the asset';
    }
    return undefined;
  }

  // ---- 2. redeem the destination for the client (service-held secret) ----

  private async redeemForClient(order: OrderRecord, pass: SolverPass): Promise<void> {
    const dst = this.evmSide(order.destination);
    if (!dst) return;
    const sealed = await secretCiphertext(this.db, order.id);
    if (!sealed) return;
    const secret = Buffer.from(this.secrets.open(sealed));
    if (!opensSecretHash(secret, order)) {
      this.log.error({ order: order.id }, 'the stored secret does not match the secret hash');
      return;
    }
    if (await this.redeem(dst, secret)) {
      pass.redeemedForClient.push(order.id);
      this.log.info({ order: order.id, chain: dst.access.chain.key }, 'redeemed the destination for the client');
    }
  }

  // ---- 3. redeem the source with the secret from chain (rule 4) ----

  private async redeemSource(order: OrderRecord, pass: SolverPass): Promise<void> {
    const src = this.evmSide(order.source);
    if (!src) return;
    const secret = Buffer.from(order.destination.secret, 'hex');
    if (!opensSecretHash(secret, order)) {
      this.log.error({ order: order.id }, 'the secret seen on the destination does not match the secret hash');
      return;
    }
    if (await this.redeem(src, secret)) {
      pass.redeemedSources.push(order.id);
      this.log.info({ order: order.id, chain: src.access.chain.key }, 'redeemed the source');
    }
  }

  /** Redeems an open HTLC order; false when there is nothing to redeem (absent or fulfilled). */
  private async redeem(side: EvmSide, secret: Buffer): Promise<boolean> {
    const onChain = await readHtlcOrder(side.access.client, side.htlc, side.orderId);
    if (onChain.initiator === ZERO_ADDRESS || onChain.fulfilledAt !== 0n) return false;
    const { wallet } = side.access;
    await this.send(side.access.client, () =>
      wallet.writeContract({
        account: this.account,
        chain: wallet.chain,
        address: side.htlc,
        abi: htlcAbi,
        functionName: 'redeem',
        args: [side.orderId, `0x${secret.toString('hex')}`],
      }),
    );
    return true;
  }

  // ---- 4. refund own expired destinations ----

  private async refundDestination(order: OrderRecord, pass: SolverPass): Promise<void> {
    const dst = this.evmSide(order.destination);
    if (!dst) return;
    const { client, wallet } = dst.access;
    const onChain = await readHtlcOrder(client, dst.htlc, dst.orderId);
    if (onChain.initiator === ZERO_ADDRESS || onChain.fulfilledAt !== 0n) return;
    if (!isAddressEqual(onChain.initiator, this.address)) return;
    // The refund lands in the next block at the earliest, which must be above initiatedAt + timelock.
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head < onChain.initiatedAt + onChain.timelock) return;
    await this.send(client, () =>
      wallet.writeContract({ account: this.account, chain: wallet.chain, address: dst.htlc, abi: htlcAbi, functionName: 'refund', args: [dst.orderId] }),
    );
    pass.refunded.push(order.id);
    this.log.info({ order: order.id, chain: dst.access.chain.key }, 'refunded the expired destination');
  }

  // ---- helpers ----

  private evmSide(swap: SwapRecord): EvmSide | undefined {
    const access = this.chains.get(swap.chain);
    const asset = this.registry.asset(swap.asset);
    if (!access || !asset || asset.chain.key !== swap.chain || asset.htlc.address === '') return undefined;
    return {
      access,
      asset,
      htlc: getAddress(asset.htlc.address),
      native: asset.token.schema === 'evm:native',
      orderId: `0x${swap.swapId}`,
    };
  }

  /** Sends one transaction and waits for its receipt; a reverted one throws. */
  private async send(client: PublicClient, write: () => Promise<Hex>): Promise<void> {
    const hash = await write();
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  }
}

interface EvmSide {
  access: ChainAccess;
  asset: Asset;
  htlc: Address;
  native: boolean;
  orderId: Hex;
}

const tokenAbi = [{ type: 'function', name: 'token', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] }] as const;

/** Why an on-chain HTLC order differs from the stored swap (initiator, redeemer = solver, amount, timelock). */
export function termsMismatch(onChain: OnChainHtlcOrder, swap: SwapRecord, solver: Address): string | undefined {
  if (!isAddressEqual(onChain.initiator, getAddress(swap.initiator))) return `initiator ${onChain.initiator}`;
  if (!isAddressEqual(onChain.redeemer, solver)) return `redeemer ${onChain.redeemer}`;
  if (onChain.amount !== BigInt(swap.amount)) return `amount ${onChain.amount}, expected ${swap.amount}`;
  if (onChain.timelock !== BigInt(swap.timelock)) return `timelock ${onChain.timelock}, expected ${swap.timelock}`;
  return undefined;
}

/** Rule 3: a secret is exactly 32 bytes and its sha256 is the order's secret hash. */
function opensSecretHash(secret: Buffer, order: OrderRecord): boolean {
  return secret.length === 32 && sha256(secret).slice(2) === order.secretHash.toLowerCase();
}
