import { createHash } from 'node:crypto';
import { systemClock, unixSeconds, type Clock } from '../../clock.ts';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  getAddressEncoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Transaction,
} from '@solana/kit';
import type { Static } from '@sinclair/typebox';
import { AppError, invalid } from '../../errors.ts';
import { sourceTerms } from '../../orders/source-terms.ts';
import { performWith } from '../../relayer/action-bodies.ts';
import { SOLANA_ACTION_BODIES } from './action-bodies.ts';
import { jobKey, liveActionJob, type RelayerAction } from '../../relayer/actions.ts';
import { mayCoSignInstantRefund } from '../../store/instant-refund-gate.ts';
import { leaseIsHeld, solverLeaseName } from '../../store/leases.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord } from '../../store/orders.ts';
import { enqueueJob, findJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import { requeueFailedJob, requeueFailedJobWith } from '../../store/signed-txs.ts';
import type { JobSigner } from '../../store/schema.ts';
import type { ClientActions } from '../adapter.ts';
import type { Chain, Registry } from '../registry.ts';
import { solanaSigningData } from './index.ts';
import { solanaSide, type OnChainSwap, type SolanaChainReader, type SolanaSide } from './htlc-state.ts';
import type { SolanaJobPayload } from './jobs.ts';

export interface SolanaClientActionsDeps {
  reader: SolanaChainReader;
  /** The relayer's account: the fee payer and sponsor of the gasless initiate, and the payer of the clients' actions. */
  relayer: Address;
  /** The solver's account, when this instance holds its key: it signs instant refunds of sources it would redeem. */
  solver?: Address;
  /** The time order deadlines count by (default: the system clock). */
  clock?: Clock;
}

/** How many block heights a blockhash stays usable for, on every Solana cluster. */
const BLOCKHASH_VALIDITY = 150n;

/**
 * The order actions on one Solana chain. Each checks the request against the stored order and the
 * chain, then writes the one relayer job of the order and action, which the chain's sender signs and
 * pays for. A repeated or concurrent request gets that same job.
 *
 * The gasless initiate relays the client's own signed transaction, and only the one the order's
 * `versioned_tx_gasless` describes: its message must be byte for byte the order's initiate with the
 * relayer as fee payer and sponsor (the client may only have picked another recent blockhash), and
 * the initiator's signature must verify. So the relayer's signature pays for nothing but that initiate.
 */
export class SolanaClientActions implements ClientActions {
  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly chain: Chain,
    private readonly deps: SolanaClientActionsDeps,
  ) {}

  readonly perform = performWith(SOLANA_ACTION_BODIES, {
    initiate: (order, body) => this.initiate(order, body),
    redeem: (order, body) => this.redeem(order, body.secret),
    refund: (order) => this.refund(order),
    'instant-refund': (order) => this.instantRefund(order),
  });

  private async initiate(order: OrderRecord, body: Static<typeof SOLANA_ACTION_BODIES.initiate>): Promise<RelayerJob> {
    const side = solanaSide(this.registry, this.chain, order.source);
    if (side.kind === 'native') {
      throw new AppError('not_supported', 'initiate: a native SOL source has no gasless initiate: sign and send versioned_tx yourself');
    }
    if (body.order_id !== undefined && body.order_id.toLowerCase() !== order.id) throw invalid("invalid body field 'order_id': is not this order's id");
    const signed = signedTransaction(body);
    const existing = await liveActionJob(this.db, order.id, 'initiate');
    if (existing) return existing;
    await this.checkIsOrderInitiate(order, signed);
    if (BigInt(order.deadline) < BigInt(unixSeconds(this.deps.clock ?? systemClock))) {
      throw new AppError('deadline_passed', `order ${order.id}: its deadline ${order.deadline} has passed, the source may no longer be initiated`);
    }
    if (order.source.initiateTxHash !== '' || (await this.swap(side, 'processed'))) {
      throw new AppError('already_initiated', `order ${order.id}: the source is already initiated`);
    }
    // The blockhash is at most as old as the order, so it cannot land past this height.
    const lastValid = (await this.read(() => this.deps.reader.blockHeight())) + BLOCKHASH_VALIDITY;
    return this.enqueue(order, 'initiate', 'relayer', { kind: 'client-signed', tx: signed.base64, lastValidBlockHeight: lastValid.toString() });
  }

  /** The transaction is the order's gasless initiate with some recent blockhash, signed by the initiator. */
  private async checkIsOrderInitiate(order: OrderRecord, signed: SignedInitiate): Promise<void> {
    const terms = sourceTerms(order, this.registry)!;
    const message = signed.transaction.messageBytes;
    let blockhash: string;
    try {
      blockhash = getCompiledTransactionMessageDecoder().decode(message).lifetimeToken;
    } catch {
      throw invalid(`invalid body field '${signed.field}': not a Solana versioned transaction`);
    }
    const expected = await solanaSigningData(terms, { gasless: true, relayer: this.deps.relayer, recentBlockhash: blockhash });
    const expectedMessage = getTransactionDecoder().decode(Buffer.from(expected.versioned_tx_gasless!, 'base64')).messageBytes;
    if (Buffer.compare(Buffer.from(message), Buffer.from(expectedMessage)) !== 0) {
      throw invalid(
        `invalid body field '${signed.field}': the transaction is not this order's initiate: sign versioned_tx_gasless as it is (only its recent blockhash may be newer)`,
      );
    }
    const initiator = order.source.initiator as Address;
    const signature = signed.transaction.signatures[initiator];
    if (!signature || !ed25519.verify(Uint8Array.from(signature), Uint8Array.from(message), Uint8Array.from(getAddressEncoder().encode(initiator)))) {
      throw new AppError('invalid_signature', `invalid body field '${signed.field}': the transaction is not signed by the source initiator ${initiator}`);
    }
  }

  private async redeem(order: OrderRecord, secret: string): Promise<RelayerJob> {
    const side = solanaSide(this.registry, this.chain, order.destination);
    // Safety rule 3: exactly 32 bytes (the body's schema), hashing to the order's secret hash.
    const bytes = Buffer.from(secret.replace(/^0x/, ''), 'hex');
    if (createHash('sha256').update(bytes).digest('hex') !== order.secretHash) {
      throw new AppError('secret_mismatch', "invalid body field 'secret': its sha256 is not the order's secret_hash");
    }
    const existing = await liveActionJob(this.db, order.id, 'redeem');
    if (existing) return existing;
    const onChain = await this.openSwap(order, side, 'destination');
    return this.enqueue(order, 'redeem', 'relayer', { ...this.ref(side, onChain), kind: 'redeem', redeemer: onChain.redeemer, secret: bytes.toString('hex') });
  }

  private async refund(order: OrderRecord): Promise<RelayerJob> {
    const side = solanaSide(this.registry, this.chain, order.source);
    const existing = await liveActionJob(this.db, order.id, 'refund');
    if (existing) return existing;
    const [onChain, slot] = await Promise.all([this.openSwap(order, side, 'source'), this.read(() => this.deps.reader.slot())]);
    // The program refunds in a slot above the expiry slot; the transaction lands after the current one.
    if (slot < onChain.expirySlot) {
      throw new AppError('not_expired', `order ${order.id}: the source swap has not expired: refundable after slot ${onChain.expirySlot}, the chain is at slot ${slot}`);
    }
    return this.enqueue(order, 'refund', 'relayer', { ...this.ref(side, onChain), kind: 'refund' });
  }

  /**
   * The program refunds at once with the redeemer's signature: the solver's. It signs only while the
   * destination is not funded, and from then on never funds it (safety rule 5). The initiator's
   * consent is the request of the app that created the order (the only one that may ask).
   */
  private async instantRefund(order: OrderRecord): Promise<RelayerJob> {
    const side = solanaSide(this.registry, this.chain, order.source);
    const existing = await liveActionJob(this.db, order.id, 'instant-refund');
    if (existing) return existing;
    const solver = this.deps.solver;
    if (solver && solver !== order.source.redeemer) throw new AppError('unavailable', `instant-refund: the solver key on ${this.chain.key} is not this order's redeemer`);
    // Without the solver's key here (an API instance), the job is the workers' that run the order's solver.
    if (!solver && !(await leaseIsHeld(this.db, solverLeaseName(order.solverId)))) {
      throw new AppError('unavailable', `instant-refund: no instance runs this order's solver (${order.solverId}) on ${this.chain.key}`);
    }
    const onChain = await this.openSwap(order, side, 'source');
    // Last, after every other check: from here on the solver never funds this destination (rule 5).
    if (!(await mayCoSignInstantRefund(this.db, order.id))) {
      throw new AppError('instant_refund_closed', `order ${order.id}: the destination is initiated, so no instant refund: refund after the source timelock`);
    }
    return this.enqueue(order, 'instant-refund', 'solver', { ...this.ref(side, onChain), kind: 'instant-refund', redeemer: onChain.redeemer });
  }

  private ref(side: SolanaSide, onChain: OnChainSwap) {
    return { ...side.ref, ...(onChain.sponsor ? { sponsor: onChain.sponsor } : {}) };
  }

  /** The side's swap account, which must be on chain (initiated, neither redeemed nor refunded). */
  private async openSwap(order: OrderRecord, side: SolanaSide, which: 'source' | 'destination'): Promise<OnChainSwap> {
    const onChain = await this.swap(side);
    if (!onChain) throw new AppError('not_initiated', `order ${order.id}: the ${which} swap account is not on chain (not initiated yet, or already redeemed or refunded)`);
    return onChain;
  }

  private swap(side: SolanaSide, commitment: 'processed' | 'confirmed' = 'confirmed'): Promise<OnChainSwap | undefined> {
    return this.read(() => this.deps.reader.swap(side, commitment));
  }

  private async read<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw new AppError('chain_unavailable', `cannot read ${this.chain.key}`, { cause: err });
    }
  }

  private async enqueue(order: OrderRecord, action: RelayerAction, signer: JobSigner, payload: SolanaJobPayload): Promise<RelayerJob> {
    const key = jobKey(order.id, action);
    const { job } = await enqueueJob(this.db, { chain: this.chain.key, orderId: order.id, action, idempotencyKey: key, payload, signer });
    if (job.status !== 'failed') return job;
    // A failed initiate is asked for again with the client's new transaction.
    await (payload.kind === 'client-signed' ? requeueFailedJobWith(this.db, key, payload) : requeueFailedJob(this.db, key));
    return (await findJob(this.db, key)) ?? job;
  }
}

interface SignedInitiate {
  field: 'signature' | 'serialized_tx';
  base64: string;
  transaction: Transaction;
}

/** The signed transaction of a gasless initiate, decoded. */
function signedTransaction(body: Static<typeof SOLANA_ACTION_BODIES.initiate>): SignedInitiate {
  const [field, base64] = 'signature' in body ? (['signature', body.signature] as const) : (['serialized_tx', body.serialized_tx] as const);
  try {
    return { field, base64, transaction: getTransactionDecoder().decode(Buffer.from(base64, 'base64')) };
  } catch {
    throw invalid(`invalid body field '${field}': not a Solana transaction`);
  }
}
