import { chainAdapter } from '../chains/adapters.ts';
import type { ClientActions } from '../chains/adapter.ts';
import type { Registry } from '../chains/registry.ts';
import { AppError, notFound } from '../errors.ts';
import type { App } from '../store/apps.ts';
import type { Db } from '../store/database.ts';
import { saveInstantRefundConsent } from '../store/instant-refund-consent.ts';
import { findOrder, type OrderRecord } from '../store/orders.ts';
import { isWrittenSigned, type RelayerJob } from '../store/relayer-jobs.ts';
import { liveActionJob, type RelayerAction } from './actions.ts';
import { checkMayAct } from './order-permissions.ts';
import { SubmissionWait } from './submission-wait.ts';

/** The refusals a chain gives once the action asked for has been done. */
const ACTED_MEANWHILE: ReadonlySet<string> = new Set(['already_initiated', 'already_settled', 'not_initiated']);

export interface OrderActionsDeps {
  /** The actions on a chain the service works (it has an RPC for it), by registry chain key. */
  actionsFor(chainKey: string): ClientActions | undefined;
  /** How long an action waits for the relayer to submit before answering with the job's state (default 5 s). */
  waitMs?: number;
  /** How often it looks while waiting (default 100 ms). */
  pollMs?: number;
}

/** A job as the API shows it: never its payload, which holds secrets and signatures (safety rule 7). */
export interface JobView {
  id: string;
  action: string;
  status: RelayerJob['status'];
  tx_hash: string;
  attempts: number;
  last_error: string;
}

export const jobView = (job: RelayerJob): JobView => ({
  id: job.id,
  action: job.action,
  status: job.status,
  // A hash is shown once the transaction is out, not while it is only signed; a job written with its
  // signed transaction is never re-signed, so its hash is known from the start.
  tx_hash: isWrittenSigned(job) || job.status === 'submitted' || job.status === 'confirmed' || job.status === 'failed' ? job.txHash : '',
  attempts: job.attempts,
  last_error: job.lastError,
});

/**
 * The order actions of PATCH /v2/orders/{id} and /v3/orders/{id}: who may ask is decided here, the
 * rest by the family of the side acted on (redeem: the destination; every other action: the source),
 * which writes one relayer job per order and action. Then it waits briefly for the job to go out.
 */
export class OrderActions {
  private readonly waitMs: number;
  private readonly submissions: SubmissionWait;

  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly deps: OrderActionsDeps,
  ) {
    this.waitMs = deps.waitMs ?? 5_000;
    this.submissions = new SubmissionWait(db, deps.pollMs ?? 100);
  }

  /** The hashes a client signs for an instant refund of its source (GET .../instant-refund-hash). */
  async instantRefundHashes(orderId: string): Promise<string[] | string> {
    const order = await findOrder(this.db, orderId);
    if (!order) throw notFound(`order ${orderId} not found`);
    const chain = this.registry.chain(order.source.chain);
    const actions = chain && chainAdapter(chain)?.servesInstantRefundHash ? this.actionsOn(order.source.chain, 'instant-refund') : undefined;
    if (actions?.instantRefundHashes) return actions.instantRefundHashes(order);
    if (actions?.instantRefundDigest) return actions.instantRefundDigest(order);
    throw new AppError(
      'not_supported',
      `order ${orderId}: its source is on ${order.source.chain}, which has no instant-refund hash: instant refunds there need no client signature (send PATCH ?action=instant-refund)`,
    );
  }

  /** For Garden's SDK relayer routes (POST /relayer/bitcoin/...): the order, when the app may act on it with `action` (404, 403). */
  private async orderFor(app: App, orderId: string, action: RelayerAction): Promise<OrderRecord> {
    const order = await findOrder(this.db, orderId);
    if (!order) throw notFound(`order ${orderId} not found`);
    checkMayAct(this.registry, app, order, action);
    return order;
  }

  /** POST /relayer/bitcoin/instant-refund-hash: the hashes, for the app that may act on the order. */
  async instantRefundHashesFor(app: App, orderId: string): Promise<string[]> {
    const order = await this.orderFor(app, orderId, 'instant-refund');
    const hashes = await this.instantRefundHashes(orderId);
    if (typeof hashes === 'string') throw new AppError('not_supported', `order ${orderId}: its source is on ${order.source.chain}, not a Bitcoin-family chain: use GET /v2/orders/{id}/instant-refund-hash`);
    return hashes;
  }

  /**
   * POST /relayer/bitcoin/instant-refund: the client's signatures, verified, stored as its consent to an
   * instant refund should the swap fail. Nothing is co-signed and rule 5's flag is not touched: the
   * solver still funds the destination, and uses the consent only if the order fails (src/solver).
   */
  async storeInstantRefundConsent(app: App, orderId: string, signatures: readonly string[]): Promise<void> {
    const order = await this.orderFor(app, orderId, 'instant-refund');
    const actions = this.actionsOn(order.source.chain, 'instant-refund');
    if (!actions.checkInstantRefundConsent) throw new AppError('not_supported', `order ${orderId}: its source on ${order.source.chain} takes no instant-refund signatures`);
    await saveInstantRefundConsent(this.db, order.id, await actions.checkInstantRefundConsent(order, signatures));
  }

  /** POST /relayer/bitcoin/redeem: the client's own signed redeem of its destination, checked and queued. */
  async relayClientRedeem(app: App, orderId: string, rawTx: string): Promise<RelayerJob> {
    const order = await this.orderFor(app, orderId, 'redeem');
    const actions = this.actionsOn(order.destination.chain, 'redeem');
    if (!actions.relayClientRedeem) throw new AppError('not_supported', `order ${orderId}: its destination on ${order.destination.chain} takes no client-signed redeem transaction`);
    return actions.relayClientRedeem(order, rawTx);
  }

  async perform(app: App, orderId: string, action: RelayerAction, body: unknown): Promise<RelayerJob> {
    const order = await findOrder(this.db, orderId);
    if (!order) throw notFound(`order ${orderId} not found`);
    checkMayAct(this.registry, app, order, action);
    const side = action === 'redeem' ? order.destination : order.source;
    const actions = this.actionsOn(side.chain, action);
    const job = await actions.perform(order, action, body).catch(async (err: unknown) => {
      // An identical request may have queued the action, and it landed, between this request's job
      // lookup and its chain read: the chain then refuses, and that job is the answer (rule 6).
      if (!(err instanceof AppError && ACTED_MEANWHILE.has(err.code))) throw err;
      const acted = await liveActionJob(this.db, order.id, action);
      if (!acted) throw err;
      return acted;
    });
    return this.waitForSubmission(job);
  }

  /** The actions of the chain's family, or why there are none. */
  private actionsOn(chainKey: string, action: RelayerAction): ClientActions {
    const chain = this.registry.chain(chainKey);
    if (!chain) throw new AppError('internal', `chain ${chainKey} of a stored order is not in the registry`);
    const adapter = chainAdapter(chain);
    if (!adapter?.connect) throw new AppError('not_supported', `${action} on ${chain.family} chains (${chain.key}) is not supported yet`);
    const body = adapter.actionBodies?.[action];
    if (body && 'refused' in body) throw new AppError('not_supported', body.refused as string);
    const actions = this.deps.actionsFor(chain.key);
    if (!actions) throw new AppError('chain_unavailable', `no RPC is configured for ${chain.key}`);
    return actions;
  }

  /** Waits up to waitMs for the relayer to submit (or settle) the job; returns its latest state. */
  private waitForSubmission(job: RelayerJob): Promise<RelayerJob> {
    return this.submissions.wait(job, this.waitMs);
  }
}
