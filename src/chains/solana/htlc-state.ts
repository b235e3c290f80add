import { getAddressEncoder, type Address, type Commitment, type Signature } from '@solana/kit';
import type { SwapRecord } from '../../store/orders.ts';
import type { Asset, Chain, Registry } from '../registry.ts';
import { secretHashBytes, solanaAddress } from './address.ts';
import { solanaRpc } from './rpc.ts';
import { decodeSwapAccount, htlcEventsOfLogs, type OnChainSwap } from './htlc-events.ts';

export type { OnChainSwap } from './htlc-events.ts';
import { findProgramAddressSync } from './pda.ts';
import { programKind, swapAccountSeeds, type HtlcProgramKind } from './program.ts';
import type { JobSwap } from './jobs.ts';

/** One side of an order on a Solana chain: its program, token and swap account. */
export interface SolanaSide {
  asset: Asset;
  program: Address;
  kind: HtlcProgramKind;
  /** SPL: the token's mint. */
  mint?: Address;
  swapAccount: Address;
  /** The swap id the API shows: the swap account's 32 bytes in hex. */
  swapId: string;
  /** The side as a job names it (without the sponsor, which the swap account holds). */
  ref: JobSwap;
}

/** The side of `swap` on `chain`: its program and swap account, derived from the order's terms. */
export function solanaSide(registry: Registry, chain: Chain, swap: SwapRecord): SolanaSide {
  const asset = registry.asset(swap.asset);
  if (!asset || asset.chain.key !== chain.key || asset.htlc.address === '') throw new Error(`${swap.asset} has no HTLC program on ${chain.key}`);
  const kind = programKind(asset.htlc.schema);
  const program = solanaAddress(asset.htlc.address, 'asset.htlc.address');
  const initiator = solanaAddress(swap.initiator, 'initiator');
  const [swapAccount] = findProgramAddressSync(program, swapAccountSeeds(kind, initiator, secretHashBytes(swap.secretHash)));
  const mint = kind === 'spl' ? solanaAddress(asset.token.address, 'asset.token.address') : undefined;
  return {
    asset,
    program,
    kind,
    ...(mint ? { mint } : {}),
    swapAccount,
    swapId: Buffer.from(getAddressEncoder().encode(swapAccount)).toString('hex'),
    ref: { program, programKind: kind, initiator, secretHash: swap.secretHash, ...(mint ? { mint } : {}) },
  };
}

/** What the solver and the clients' actions read of a Solana chain. */
export class SolanaChainReader {
  private readonly rpc;
  private slotRead: Promise<bigint> | undefined;

  constructor(rpcUrl: string) {
    this.rpc = solanaRpc(rpcUrl);
  }

  /**
   * The side's swap account, when its program holds one there (owner and discriminator checked);
   * undefined when there is none (never initiated, or closed by a redeem or refund).
   */
  async swap(side: SolanaSide, commitment: Commitment = 'confirmed'): Promise<OnChainSwap | undefined> {
    const { value } = await this.rpc.getAccountInfo(side.swapAccount, { commitment, encoding: 'base64' }).send();
    if (!value || value.owner !== side.program) return undefined;
    return decodeSwapAccount(side.kind, Buffer.from(value.data[0], 'base64'));
  }

  /**
   * The confirmed slot. Callers at the same moment share one read in flight (a pass checks many
   * orders at once); nothing is cached beyond that.
   */
  slot(): Promise<bigint> {
    if (!this.slotRead) {
      this.slotRead = this.rpc.getSlot({ commitment: 'confirmed' }).send();
      const clear = () => (this.slotRead = undefined);
      this.slotRead.then(clear, clear);
    }
    return this.slotRead;
  }

  /** The block height (what a blockhash's validity is counted in). */
  blockHeight(): Promise<bigint> {
    return this.rpc.getBlockHeight({ commitment: 'confirmed' }).send();
  }

  /**
   * The token the side's swap locked: the mint its swap account records (Hashlock's SPL program), else
   * the one the `Initiated` event of its initiate transaction `txHash` names (Garden's program records none).
   */
  async lockedMint(onChain: OnChainSwap, txHash: string, side: SolanaSide): Promise<string | undefined> {
    if (onChain.mint) return onChain.mint;
    if (txHash === '') return undefined;
    const tx = await this.rpc.getTransaction(txHash as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    if (!tx || tx.meta?.err) return undefined;
    const program = { address: side.program, kind: side.kind };
    const initiated = htlcEventsOfLogs([program], tx.meta?.logMessages ?? []).find((e) => e.swapId === side.swapId && e.event.name === 'Initiated');
    return initiated?.event.name === 'Initiated' ? initiated.event.mint : undefined;
  }
}
