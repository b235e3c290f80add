import { abortable } from '../abort.ts';
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  getAddress,
  http,
  isAddressEqual,
  type Address,
  type Chain as ViemChain,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { htlcAbi, htlcInitiateAbi } from '../chains/evm/htlc-abi.ts';
import { evmChainId } from '../chains/evm/index.ts';
import { evmOrderId } from '../chains/evm/order-id.ts';
import type { Asset, Chain, Registry } from '../chains/registry.ts';
import { readHtlcOrder, ZERO_ADDRESS, type OnChainHtlcOrder } from '../relayer/chain-clients.ts';
import type { OrderRecord, SwapRecord } from '../store/orders.ts';
import type { SolverChain, SourceCheck } from './solver.ts';

interface EvmSide {
  asset: Asset;
  htlc: Address;
  native: boolean;
  orderId: Hex;
}

/**
 * The solver on one EVM chain: reads HTLC orders from the registry's contracts and sends its own
 * transactions from its account, one at a time, each waiting for its receipt.
 */
export class EvmSolverChain implements SolverChain {
  readonly address: Address;
  private readonly client: PublicClient;
  private readonly wallet: WalletClient;

  constructor(
    readonly chain: Chain,
    private readonly registry: Registry,
    private readonly account: LocalAccount,
    rpcUrl: string,
    /** The service's shutdown: a receipt still awaited then is given up (the next pass re-reads the chain). */
    private readonly stopping?: AbortSignal,
  ) {
    if (chain.family !== 'evm') throw new Error(`${chain.key} is not an EVM chain`);
    this.address = account.address;
    const viemChain: ViemChain = {
      id: Number(evmChainId(chain)),
      name: chain.name,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    };
    const transport = http(rpcUrl);
    this.client = createPublicClient({ chain: viemChain, transport, cacheTime: 0 });
    this.wallet = createWalletClient({ account, chain: viemChain, transport, cacheTime: 0 });
  }

  /** Funded on chain, or by a transaction the node holds unmined (a pass that died waiting for its receipt). */
  async destinationFunded(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    return (await readHtlcOrder(this.client, dst.htlc, dst.orderId, 'pending')).initiator !== ZERO_ADDRESS;
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
    if (!src.native) {
      const token = await this.client.readContract({ address: src.htlc, abi: tokenAbi, functionName: 'token' });
      if (!isAddressEqual(token, getAddress(src.asset.token.address))) return { problem: 'the source HTLC locks another token than the asset' };
    }
    const onChain = await readHtlcOrder(this.client, src.htlc, src.orderId);
    if (onChain.initiator === ZERO_ADDRESS) return { problem: 'the source HTLC order is not on chain' };
    const mismatch = termsMismatch(onChain, order.source, this.address);
    if (mismatch) return { problem: `source HTLC differs from the order: ${mismatch}` };
    if (onChain.fulfilledAt !== 0n) return { problem: 'the source HTLC is already fulfilled' };
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    return { blocksLeft: onChain.initiatedAt + onChain.timelock - head };
  }

  checkDestination(order: OrderRecord): string | undefined {
    const dst = this.side(order.destination);
    if (!isAddressEqual(getAddress(order.destination.initiator), this.address)) return 'the destination initiator is not this solver';
    const id = evmOrderId(this.destinationTerms(order, dst));
    if (id.slice(2).toLowerCase() !== order.destination.swapId.toLowerCase()) return "the destination swap id is not the HTLC order id of the destination's terms";
    return undefined;
  }

  async fundDestination(order: OrderRecord): Promise<void> {
    const dst = this.side(order.destination);
    const terms = this.destinationTerms(order, dst);
    const initiate = () =>
      this.wallet.writeContract({
        account: this.account,
        chain: this.wallet.chain,
        address: dst.htlc,
        abi: htlcInitiateAbi,
        functionName: 'initiate',
        args: [terms.redeemer, terms.timelock, terms.amount, terms.secretHash],
        value: dst.native ? terms.amount : 0n,
      });
    if (!dst.native) {
      const token = getAddress(dst.asset.token.address);
      const allowance = await this.client.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [this.address, dst.htlc] });
      if (allowance < terms.amount) {
        await this.send(() =>
          this.wallet.writeContract({ account: this.account, chain: this.wallet.chain, address: token, abi: erc20Abi, functionName: 'approve', args: [dst.htlc, terms.amount] }),
        );
      }
    }
    await this.send(initiate);
    if (!(await this.destinationFunded(order))) throw new Error(`order ${order.id}: the destination initiate was mined but the HTLC order is absent`);
  }

  async redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean> {
    const htlc = this.side(order[side]);
    // Pending state: a redeem sent by a pass that died waiting for its receipt is not sent again.
    const onChain = await readHtlcOrder(this.client, htlc.htlc, htlc.orderId, 'pending');
    if (onChain.initiator === ZERO_ADDRESS || onChain.fulfilledAt !== 0n) return false;
    await this.send(() =>
      this.wallet.writeContract({
        account: this.account,
        chain: this.wallet.chain,
        address: htlc.htlc,
        abi: htlcAbi,
        functionName: 'redeem',
        args: [htlc.orderId, `0x${secret.toString('hex')}`],
      }),
    );
    return true;
  }

  async refundDestination(order: OrderRecord): Promise<boolean> {
    const dst = this.side(order.destination);
    const onChain = await readHtlcOrder(this.client, dst.htlc, dst.orderId, 'pending');
    if (onChain.initiator === ZERO_ADDRESS || onChain.fulfilledAt !== 0n) return false;
    if (!isAddressEqual(onChain.initiator, this.address)) return false;
    // The refund lands in the next block at the earliest, which must be above initiatedAt + timelock.
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    if (head < onChain.initiatedAt + onChain.timelock) return false;
    await this.send(() =>
      this.wallet.writeContract({ account: this.account, chain: this.wallet.chain, address: dst.htlc, abi: htlcAbi, functionName: 'refund', args: [dst.orderId] }),
    );
    return true;
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

  /** Sends one transaction and waits for its receipt; a reverted one throws. */
  private async send(write: () => Promise<Hex>): Promise<void> {
    const hash = await write();
    const receipt = await abortable(this.client.waitForTransactionReceipt({ hash, pollingInterval: 50 }), this.stopping);
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  }
}

/** The solver's adapters for the EVM chains it has an RPC for. */
export function evmSolverChains(registry: Registry, account: LocalAccount, rpcUrls: Readonly<Record<string, string>>, stopping?: AbortSignal): EvmSolverChain[] {
  return Object.entries(rpcUrls).flatMap(([key, url]) => {
    const chain = registry.chain(key);
    return chain?.family === 'evm' ? [new EvmSolverChain(chain, registry, account, url, stopping)] : [];
  });
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
