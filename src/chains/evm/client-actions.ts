import { createHash } from 'node:crypto';
import { systemClock, unixSeconds, type Clock } from '../../clock.ts';
import {
  getAddress,
  hashTypedData,
  recoverTypedDataAddress,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TypedDataDefinition,
} from 'viem';
import { AppError } from '../../errors.ts';
import { sourceTerms } from '../../orders/source-terms.ts';
import { performWith } from '../../relayer/action-bodies.ts';
import { EVM_ACTION_BODIES } from './action-bodies.ts';
import { jobKey, liveActionJob, type RelayerAction } from '../../relayer/actions.ts';
import { instantRefundOpen, mayCoSignInstantRefund } from '../../store/instant-refund-gate.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord, SwapRecord } from '../../store/orders.ts';
import { enqueueJob, findJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import { requeueFailedJob } from '../../store/signed-txs.ts';
import type { ClientActions } from '../adapter.ts';
import type { Asset, Registry } from '../registry.ts';
import { readHtlcOrder, ZERO_ADDRESS, type OnChainHtlcOrder } from './htlc-reads.ts';
import { evmChainId } from './index.ts';
import type { JobPayload } from './jobs.ts';
import { initiateTypedData, refundTypedData } from '../solidity-htlc/typed-data.ts';

export interface EvmClientActionsDeps {
  /** A read client of the chain (HTLC state, current block). */
  client: PublicClient;
  /** The solver's key on the chain, when this instance holds it: it co-signs instant refunds of sources it redeems. */
  solverSigner?: LocalAccount;
  /** The time order deadlines count by (default: the system clock). */
  clock?: Clock;
}

const SIGNATURE = /^(0x)?([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/;

/**
 * The order actions on one EVM chain: each checks the request against the stored order and the
 * chain, then writes the one relayer job of the order and action, which the chain's relayer sender
 * signs and pays for. A repeated or concurrent request gets that same job.
 */
export class EvmClientActions implements ClientActions {
  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly deps: EvmClientActionsDeps,
  ) {}

  readonly perform = performWith(EVM_ACTION_BODIES, {
    initiate: (order, body) => this.initiate(order, hexOf(body.signature)),
    redeem: (order, body) => this.redeem(order, hexOf(body.secret)),
    refund: (order) => this.refund(order),
    'instant-refund': (order, body) => this.instantRefund(order, hexOf(body.signature)),
  });

  /**
   * The EIP-712 digest of Refund(orderId) for the source: what the initiator signs (a raw signature of
   * the digest equals its eth_signTypedData_v4 signature) and sends as PATCH ?action=instant-refund
   * {signature}. 409 once the destination is funded or being funded, as the action itself would answer.
   */
  async instantRefundDigest(order: OrderRecord): Promise<string> {
    const asset = this.evmAsset(order.source);
    if (!(await instantRefundOpen(this.db, order.id))) throw instantRefundClosed(order.id);
    return hashTypedData(refundTypedData({ chainId: evmChainId(asset.chain), htlc: getAddress(asset.htlc.address), orderId: `0x${order.source.swapId}` }));
  }

  private async initiate(order: OrderRecord, signature: Hex): Promise<RelayerJob> {
    const asset = this.evmAsset(order.source);
    if (asset.token.schema === 'evm:native') {
      throw new AppError('not_supported', 'initiate: the source is native ether, which cannot be pulled with a signature: broadcast initiate_transaction yourself');
    }
    const terms = sourceTerms(order, this.registry)!;
    const typedData = initiateTypedData({
      chainId: evmChainId(asset.chain),
      htlc: getAddress(asset.htlc.address),
      redeemer: getAddress(terms.redeemer),
      timelock: terms.timelock,
      amount: terms.amount,
      secretHash: `0x${terms.secretHash}`,
    });
    const initiator = getAddress(terms.initiator);
    await this.checkInitiatorSignature(asset, initiator, typedData, signature, "this order's typed data");
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
    if (onChain && onChain.initiator !== ZERO_ADDRESS) throw new AppError('already_initiated', `order ${order.id}: the source is already initiated on chain`);
    return this.enqueue(order, 'initiate', asset, {
      kind: 'initiate',
      htlc: getAddress(asset.htlc.address),
      initiator,
      redeemer: typedData.message.redeemer,
      timelock: `0x${terms.timelock.toString(16)}`,
      amount: `0x${terms.amount.toString(16)}`,
      secretHash: typedData.message.secretHash,
      signature,
    });
  }

  private async redeem(order: OrderRecord, secret: Hex): Promise<RelayerJob> {
    const asset = this.evmAsset(order.destination);
    // Safety rule 3: exactly 32 bytes (the body's schema), hashing to the order's secret hash.
    if (createHash('sha256').update(Buffer.from(secret.slice(2), 'hex')).digest('hex') !== order.secretHash) {
      throw new AppError('secret_mismatch', "invalid body field 'secret': its sha256 is not the order's secret_hash");
    }
    const existing = await liveActionJob(this.db, order.id, 'redeem');
    if (existing) return existing;
    const onChain = await this.htlcOrder(order.destination, asset);
    if (onChain.initiator === ZERO_ADDRESS) throw new AppError('not_initiated', `order ${order.id}: the destination is not initiated on chain yet`);
    if (onChain.fulfilledAt !== 0n) throw new AppError('already_settled', `order ${order.id}: the destination is already redeemed or refunded`);
    return this.enqueue(order, 'redeem', asset, {
      kind: 'redeem',
      htlc: getAddress(asset.htlc.address),
      orderId: `0x${order.destination.swapId}`,
      secret,
    });
  }

  private async refund(order: OrderRecord): Promise<RelayerJob> {
    const asset = this.evmAsset(order.source);
    const existing = await liveActionJob(this.db, order.id, 'refund');
    if (existing) return existing;
    const client = this.deps.client;
    const latest = await client.getBlockNumber();
    const onChain = await this.openSource(order, asset, latest);
    // The contract refunds from block initiatedAt + timelock + 1 on; the transaction lands in latest + 1 at best.
    const refundableAt = onChain.initiatedAt + onChain.timelock + 1n;
    if (latest + 1n < refundableAt) {
      throw new AppError(
        'not_expired',
        `order ${order.id}: the source HTLC has not expired: refundable from block ${refundableAt}, the chain is at ${latest}`,
      );
    }
    return this.enqueue(order, 'refund', asset, { kind: 'refund', htlc: getAddress(asset.htlc.address), orderId: `0x${order.source.swapId}` });
  }

  private async instantRefund(order: OrderRecord, consent: Hex): Promise<RelayerJob> {
    const asset = this.evmAsset(order.source);
    const htlc = getAddress(asset.htlc.address);
    const orderIdHex: Hex = `0x${order.source.swapId}`;
    const refund = refundTypedData({ chainId: evmChainId(asset.chain), htlc, orderId: orderIdHex });
    // The initiator's consent: its signature of Refund(orderId), as the solver gives the contract.
    await this.checkInitiatorSignature(asset, getAddress(order.source.initiator), refund, consent, 'Refund(orderId) of this source');
    const existing = await liveActionJob(this.db, order.id, 'instant-refund');
    if (existing) return existing;
    const solver = this.deps.solverSigner;
    if (!solver) throw new AppError('unavailable', `instant-refund: no solver key is configured for ${asset.chain.key}`);
    if (solver.address !== getAddress(order.source.redeemer)) {
      throw new AppError('unavailable', `instant-refund: the solver key on ${asset.chain.key} is not this order's redeemer`);
    }
    await this.openSource(order, asset);
    // Last, after every other check: from here on the solver never funds this destination (rule 5).
    if (!(await mayCoSignInstantRefund(this.db, order.id))) throw instantRefundClosed(order.id);
    const signature = await solver.signTypedData(refund);
    return this.enqueue(order, 'instant-refund', asset, { kind: 'instant-refund', htlc, orderId: orderIdHex, signature });
  }

  /** The source HTLC on chain, which must be initiated and neither redeemed nor refunded. */
  private async openSource(order: OrderRecord, asset: Asset, blockNumber?: bigint): Promise<OnChainHtlcOrder> {
    const onChain = await this.htlcOrder(order.source, asset, blockNumber);
    if (onChain.initiator === ZERO_ADDRESS) throw new AppError('not_initiated', `order ${order.id}: the source is not initiated on chain`);
    if (onChain.fulfilledAt !== 0n) throw new AppError('already_settled', `order ${order.id}: the source is already redeemed or refunded`);
    return onChain;
  }

  private evmAsset(swap: SwapRecord): Asset {
    const asset = this.registry.asset(swap.asset);
    if (!asset) throw new AppError('internal', `asset ${swap.asset} of a stored order is not in the registry`);
    return asset;
  }

  /**
   * The initiator signed `typedData`: an account by ECDSA, a contract (a Safe, a smart account) by
   * answering ERC-1271's isValidSignature, as the HTLC itself checks. With the node out of reach, an
   * ECDSA signature by the initiator is accepted (the HTLC checks again when the job is sent, and a
   * contract initiator's refusal then fails the job with the reason); any other is a 503.
   */
  private async checkInitiatorSignature(asset: Asset, initiator: Address, typedData: TypedDataDefinition, signature: Hex, what: string): Promise<void> {
    const client = this.deps.client;
    let code: Hex | undefined;
    try {
      code = await client.getCode({ address: initiator });
    } catch (err) {
      const signer = SIGNATURE.test(signature) ? await recoverTypedDataAddress({ ...typedData, signature }).catch(() => undefined) : undefined;
      if (signer === initiator) return;
      throw new AppError('chain_unavailable', `cannot read the initiator on ${asset.chain.key}`, { cause: err });
    }
    if (code && code !== '0x') {
      const accepted = await client.verifyTypedData({ ...typedData, address: initiator, signature }).catch(() => false);
      if (!accepted) throw new AppError('invalid_signature', `invalid body field 'signature': the initiator contract ${initiator} does not accept it for ${what} (ERC-1271)`);
      return;
    }
    if (!SIGNATURE.test(signature)) throw new AppError('invalid_signature', `invalid body field 'signature': must be a 65-byte ECDSA signature in hex`);
    let signer: Address;
    try {
      signer = await recoverTypedDataAddress({ ...typedData, signature });
    } catch {
      throw new AppError('invalid_signature', "invalid body field 'signature': not a valid ECDSA signature");
    }
    if (signer !== initiator) {
      throw new AppError('invalid_signature', `invalid body field 'signature': signed by ${signer}, not by the source initiator ${initiator} over ${what}`);
    }
  }

  private async htlcOrder(swap: SwapRecord, asset: Asset, blockNumber?: bigint): Promise<OnChainHtlcOrder> {
    try {
      return await readHtlcOrder(this.deps.client, getAddress(asset.htlc.address), `0x${swap.swapId}`, blockNumber);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('chain_unavailable', `cannot read the HTLC on ${asset.chain.key}`, { cause: err });
    }
  }

  private async enqueue(order: OrderRecord, action: RelayerAction, asset: Asset, payload: JobPayload): Promise<RelayerJob> {
    const key = jobKey(order.id, action);
    const { job } = await enqueueJob(this.db, { chain: asset.chain.key, orderId: order.id, action, idempotencyKey: key, payload });
    if (job.status === 'failed') await requeueFailedJob(this.db, key);
    return (await findJob(this.db, key)) ?? job;
  }
}

/** A hex field its schema has checked, as 0x-prefixed lower case. */
const hexOf = (value: string): Hex => (value.startsWith('0x') ? value : `0x${value}`).toLowerCase() as Hex;

const instantRefundClosed = (orderId: string) =>
  new AppError('instant_refund_closed', `order ${orderId}: the destination is initiated, so no instant refund: refund after the source timelock`);

