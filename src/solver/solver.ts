import { createHash } from 'node:crypto';
import type { ClientActions } from '../chains/adapter.ts';
import { systemClock, unixSeconds, type Clock } from '../clock.ts';
import type { Chain } from '../chains/registry.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import { safeErrorText } from '../errors.ts';
import { accrueOrderFees } from '../store/affiliates.ts';
import { dropInstantRefundConsent, instantRefundConsent } from '../store/instant-refund-consent.ts';
import { toRfc3339Seconds, type Db } from '../store/database.ts';
import type { OrderRecord } from '../store/orders.ts';
import { releaseOrderLiquidity, releaseOrdersLiquidity } from '../store/solvers.ts';
import { claimFundings, secretCiphertexts, solverWork } from '../store/solver-queries.ts';
import { TurnBatch } from './job-batches.ts';
import { silentLog, type Log } from '../log.ts';

/** Rule 2's margin by default, in seconds (the service config's `solver_rule2_margin_seconds`). */
export const DEFAULT_RULE2_MARGIN_SECONDS = 300;

export interface SolverOptions {
  /**
   * Rule 2's margin: the source must have more than destination timelock + this left, in seconds
   * (default `DEFAULT_RULE2_MARGIN_SECONDS`). The funding's broadcast deadline (`fundBy`, the job's
   * `broadcast_by`) is the moment that stops holding, so both count by this one margin.
   */
  marginSeconds?: number;
  /** Orders handled per step and pass (default 200). */
  batch?: number;
  /** Orders read and acted on at once within a step (default 64): a pass costs RPC round trips / this. */
  concurrency?: number;
  /**
   * With orders `touch`ed, a pass looks at those orders only, and a full pass over every order runs at
   * most this often (default 1000 ms); a pass with no touched order is always full.
   */
  fullPassMs?: number;
  /**
   * The clients' actions by chain key (ChainRuntime.clientActions): the instant refunds the clients
   * consented to in advance go through them. Without it, stored consents are not used.
   */
  clientActions?: (chainKey: string) => ClientActions | undefined;
  /**
   * Whether this solver also takes the service's steps on every order, whoever its solver (the client
   * redeems and refunds with what the service holds, the fees: SOLVER_OWN_STEPS' complement). True for
   * the service's own solver (the default); a `hashlock solver` process takes only its own.
   */
  serviceSteps?: boolean;
  /** The time rule 2's funding deadline and the failed orders' deadlines count from (default: the system clock). */
  clock?: Clock;
  log?: Log;
}

/** What one pass did, by step (transactions sent or records written). */
export interface SolverPass {
  funded: string[];
  redeemedForClient: string[];
  redeemedSources: string[];
  refunded: string[];
  refundedForClient: string[];
  /** Sources refunded at once with the client's stored consent, the order having failed. */
  instantRefunded: string[];
  accrued: string[];
  /** Orders left alone on purpose, with the reason (rule 1/2/5, deadline, wrong terms). */
  skipped: Array<{ orderId: string; reason: string }>;
}

/** The source HTLC as found on chain: why it cannot be relied on, or how many blocks it has left. */
export type SourceCheck = { problem: string } | { blocksLeft: bigint };

/**
 * What the solver does on one chain, in that chain family's terms. The `Solver` decides when (the
 * safety rules and the order of steps); an adapter only reads and writes its chain. Each write is
 * idempotent: called again after a crash at any point, it sends nothing that is already done.
 */
export interface SolverChain {
  readonly chain: Chain;
  /** A short description of an error of this chain's, safe for logs (safety rule 7); the redacted message without it. */
  readonly describeError?: (err: unknown) => string;
  /** Whether the order's destination HTLC is funded on chain, or its funding already broadcast. */
  destinationFunded(order: OrderRecord): Promise<boolean>;
  /** Rule 1: the source HTLC on chain has exactly the order's terms (contract, asset, parties, secret hash, amount, timelock). */
  checkSource(order: OrderRecord): Promise<SourceCheck>;
  /** The destination the solver would create is the order's destination swap (its id, its initiator); a reason when not. */
  checkDestination(order: OrderRecord): string | undefined;
  /**
   * Funds the destination: the funding must reach the chain by `fundBy` (safety rule 2 at broadcast),
   * so its job carries it and the engine never sends it later.
   */
  fundDestination(order: OrderRecord, fundBy: Date): Promise<void>;
  /** Redeems one side of the order with the secret; false when there is nothing (left) to redeem or it cannot act for that side. */
  redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean>;
  /** Refunds the solver's own expired destination; false when there is nothing to refund yet. */
  refundDestination(order: OrderRecord): Promise<boolean>;
  /**
   * Refunds an expired source to the client with the key the service holds for it (Bitcoin-family
   * sides without a client delegate); absent on families where the client always signs.
   */
  refundSourceForClient?(order: OrderRecord): Promise<boolean>;
}


/**
 * The solver: funds destinations (safety rules 1, 2 and 5 of docs/safety.md), redeems destinations for clients
 * whose secret the service holds, redeems its sources as soon as the secret is on chain (rule 4), and
 * refunds its own expired destinations, on every chain it has an adapter for. Each step re-checks the
 * chain before it writes, so a pass re-run after a crash at any point sends nothing twice (rule 6).
 */
export class Solver {
  private readonly chains: ReadonlyMap<string, SolverChain>;
  private readonly marginMs: bigint;
  private readonly batch: number;
  private readonly concurrency: number;
  private readonly log: Log;
  private readonly fullPassMs: number;
  private readonly clock: Clock;
  private readonly clientActions: ((chainKey: string) => ClientActions | undefined) | undefined;
  private readonly serviceSteps: boolean;
  private touched = new Set<string>();
  /** The sealed secrets of a pass's client redeems, read together. */
  private readonly sealedSecrets: TurnBatch<string, Uint8Array | null>;
  private lastFullPass = 0;

  constructor(
    private readonly db: Db,
    readonly solverId: string,
    chains: readonly SolverChain[],
    private readonly secrets: SecretBox,
    options: SolverOptions = {},
  ) {
    this.chains = new Map(chains.map((c) => [c.chain.key, c]));
    this.marginMs = BigInt(Math.round((options.marginSeconds ?? DEFAULT_RULE2_MARGIN_SECONDS) * 1000));
    this.batch = options.batch ?? 200;
    this.concurrency = options.concurrency ?? 64;
    this.fullPassMs = options.fullPassMs ?? 1_000;
    this.log = options.log ?? silentLog;
    this.clock = options.clock ?? systemClock;
    this.clientActions = options.clientActions;
    this.serviceSteps = options.serviceSteps ?? true;
    this.sealedSecrets = new TurnBatch((ids) => secretCiphertexts(db, ids));
  }

  /** The order changed (a watcher recorded an event, a client acted): the next pass looks at it. */
  touch(orderId: string): void {
    if (this.touched.size < 10_000) this.touched.add(orderId);
  }

  /**
   * One pass: redeem sources (the solver's own money), funding, client redeems and refunds, all steps
   * at once, over the orders touched since the last pass, or over all of them when none was or a full
   * pass is due. Each step re-checks its order before it writes, as it always did (rule 6).
   */
  async tick(signal?: AbortSignal): Promise<SolverPass> {
    const pass: SolverPass = { funded: [], redeemedForClient: [], redeemedSources: [], refunded: [], refundedForClient: [], instantRefunded: [], accrued: [], skipped: [] };
    const chains = [...this.chains.keys()];
    if (chains.length === 0) return pass;
    const now = this.clock.now();
    const full = this.touched.size === 0 || now - this.lastFullPass >= this.fullPassMs;
    const only = full ? undefined : [...this.touched];
    this.touched = new Set();
    if (full) this.lastFullPass = now;
    const { steps: work, orders: byId } = await solverWork(this.db, { solverId: this.solverId, serviceSteps: this.serviceSteps, chains, limit: this.batch, nowSeconds: unixSeconds(this.clock), ...(only ? { only } : {}) });
    if (byId.size === 0) return pass;
    const each = async (ids: readonly string[], step: (order: OrderRecord) => Promise<void>) => {
      const orders = ids.flatMap((id) => byId.get(id) ?? []);
      await forEachLimit(orders, this.concurrency, async (order) => {
        if (signal?.aborted) return;
        try {
          await step(order);
        } catch (err) {
          if (!signal?.aborted) this.log.error({ order: order.id, error: this.describe(err, order) }, 'solver step failed');
        }
      });
    };
    await Promise.all([
      each(work.redeemSource, (o) => this.redeemSource(o, pass)),
      // After funding: an order the solver claimed for funding in this pass is no longer one that failed
      // (and rule 5's gate in the instant refund would refuse it).
      this.fundAll(each, work.fund, pass, signal).then((claimed) =>
        each(
          work.instantRefund.filter((id) => !claimed.has(id)),
          (o) => this.instantRefund(o, pass),
        ),
      ),
      each(work.redeemForClient, (o) => this.redeemForClient(o, pass)),
      each(work.accrue, async (o) => {
        if ((await accrueOrderFees(this.db, o.id)) > 0) pass.accrued.push(o.id);
      }),
      each(work.refund, (o) => this.refundDestination(o, pass)),
      each(work.refundSourceForClient, async (o) => {
        const src = this.chains.get(o.source.chain);
        if (await src?.refundSourceForClient?.(o)) {
          pass.refundedForClient.push(o.id);
          this.log.info({ order: o.id, chain: o.source.chain }, 'refunded the expired source to the client');
        }
      }),
    ]);
    return pass;
  }

  /**
   * Funding, for the orders of one pass together: each order's checks (rules 1 and 2, its terms) at
   * once, then one rule-5 claim for all that passed, then their jobs, then one release of the
   * liquidity they reserved.
   */
  private async fundAll(
    each: (ids: readonly string[], step: (order: OrderRecord) => Promise<void>) => Promise<void>,
    ids: readonly string[],
    pass: SolverPass,
    signal: AbortSignal | undefined,
  ): Promise<Set<string>> {
    const ready: OrderRecord[] = [];
    const fundBy = new Map<string, Date>();
    await each(ids, async (order) => {
      const by = await this.readyToFund(order, pass);
      if (!by) return;
      ready.push(order);
      fundBy.set(order.id, by);
    });
    if (ready.length === 0 || signal?.aborted) return new Set();
    // Rule 5: the intent is recorded under each order's row lock, unless an instant refund was co-signed.
    const claimed = await claimFundings(this.db, ready.map((o) => o.id));
    const byChain = new Map<SolverChain, OrderRecord[]>();
    for (const order of ready) {
      if (!claimed.has(order.id)) {
        pass.skipped.push({ orderId: order.id, reason: 'rule 5: the solver co-signed an instant refund of the source' });
        this.log.warn({ order: order.id }, 'not funding the destination: the solver co-signed an instant refund of the source');
        continue;
      }
      const dst = this.chains.get(order.destination.chain)!;
      byChain.set(dst, [...(byChain.get(dst) ?? []), order]);
    }
    await Promise.all(
      [...byChain].map(async ([dst, orders]) => {
        const funded: string[] = [];
        // All at once: an adapter may write the jobs of one turn in one statement.
        await Promise.all(
          orders.map(async (order) => {
            try {
              await dst.fundDestination(order, fundBy.get(order.id)!);
              funded.push(order.id);
              this.log.info({ order: order.id, chain: dst.chain.key }, 'funded the destination');
            } catch (err) {
              if (!signal?.aborted) this.log.error({ order: order.id, error: this.describe(err, order) }, 'solver step failed');
            }
          }),
        );
        pass.funded.push(...funded);
        await releaseOrdersLiquidity(this.db, funded).catch((err: unknown) => this.log.error({ chain: dst.chain.key, error: safeErrorText(err) }, 'releasing the liquidity failed'));
      }),
    );
    return claimed;
  }

  /**
   * Whether the order's destination is to be funded now (not funded yet, and rules 1 and 2 and its
   * terms hold): then the latest moment rule 2 allows the funding to reach the chain.
   */
  private async readyToFund(order: OrderRecord, pass: SolverPass): Promise<Date | undefined> {
    const skip = (reason: string) => {
      pass.skipped.push({ orderId: order.id, reason });
      this.log.warn({ order: order.id, reason }, 'not funding the destination');
      return undefined;
    };
    const src = this.chains.get(order.source.chain);
    const dst = this.chains.get(order.destination.chain);
    if (!src || !dst) return skip('a side is not a chain this solver serves');
    // Both reads at once: the common case is an unfunded destination whose source must be checked.
    const sourceRead = src.checkSource(order);
    sourceRead.catch(() => undefined); // awaited below unless the destination is funded
    // Already funded (an earlier pass broadcast it; the watcher has not seen it yet): nothing to send.
    if (await dst.destinationFunded(order)) {
      await releaseOrderLiquidity(this.db, order.id);
      return undefined;
    }
    const source = await sourceRead;

    if ('problem' in source) return skip(source.problem);
    // A late initiation: the solver does not fill orders whose deadline passed before the source appeared.
    const initiatedAtTime = order.source.initiateTimestamp ? Date.parse(toRfc3339Seconds(order.source.initiateTimestamp)) : NaN;
    if (Number.isFinite(initiatedAtTime) && initiatedAtTime / 1000 > Number(order.deadline)) {
      return skip('the source was initiated after the order deadline');
    }
    // Rule 2: time left on the source, in ms, beyond the destination timelock plus the margin.
    const leftMs = source.blocksLeft * BigInt(src.chain.blockTimeMs);
    const needMs = BigInt(order.destination.timelock) * BigInt(dst.chain.blockTimeMs) + this.marginMs;
    if (leftMs <= needMs) return skip(`rule 2: the source has ${leftMs / 1000n} s left, the destination needs more than ${needMs / 1000n} s`);
    const wrongDestination = dst.checkDestination(order);
    if (wrongDestination) return skip(wrongDestination);
    return new Date(this.clock.now() + Number(leftMs - needMs));
  }

  /** A step's error as the order's chains describe it (an EVM revert by name), else its redacted message. */
  private describe(err: unknown, order: OrderRecord): string {
    const describer = this.chains.get(order.destination.chain)?.describeError ?? this.chains.get(order.source.chain)?.describeError ?? safeErrorText;
    return describer(err);
  }

  /** The destination, for a client whose secret the service holds. */
  private async redeemForClient(order: OrderRecord, pass: SolverPass): Promise<void> {
    const dst = this.chains.get(order.destination.chain);
    const sealed = dst && (await this.sealedSecrets.add(order.id));
    if (!dst || !sealed) return;
    const secret = Buffer.from(this.secrets.open(sealed));
    if (!opensSecretHash(secret, order.secretHash)) {
      this.log.error({ order: order.id }, 'the stored secret does not match the secret hash');
      return;
    }
    if (await dst.redeem(order, 'destination', secret)) {
      pass.redeemedForClient.push(order.id);
      this.log.info({ order: order.id, chain: dst.chain.key }, 'redeemed the destination for the client');
    }
  }

  /** Rule 4: the source, with the secret read from the destination's chain. */
  private async redeemSource(order: OrderRecord, pass: SolverPass): Promise<void> {
    const src = this.chains.get(order.source.chain);
    if (!src) return;
    const secret = Buffer.from(order.destination.secret, 'hex');
    if (!opensSecretHash(secret, order.secretHash)) {
      this.log.error({ order: order.id }, 'the secret seen on the destination does not match the secret hash');
      return;
    }
    if (await src.redeem(order, 'source', secret)) {
      pass.redeemedSources.push(order.id);
      this.log.info({ order: order.id, chain: src.chain.key }, 'redeemed the source');
    }
  }

  /**
   * The order failed (its deadline passed with the destination unfunded): the source goes back to the
   * client at once with the signatures it gave in advance, not after the source timelock. The family's
   * instant-refund action checks them again and takes rule 5's gate, so the solver never funds it after.
   */
  private async instantRefund(order: OrderRecord, pass: SolverPass): Promise<void> {
    const actions = this.clientActions?.(order.source.chain);
    const signatures = await instantRefundConsent(this.db, order.id);
    if (!actions?.instantRefundWithConsent || !signatures) return;
    const outcome = await actions.instantRefundWithConsent(order, signatures);
    if ('outdated' in outcome) {
      // The signatures no longer sign the HTLC's hashes (another payment to it changed them): dropped,
      // so the pass does not retry them; a fresh consent from the client is used, else the timelock refund.
      await dropInstantRefundConsent(this.db, order.id, signatures);
      this.log.warn({ order: order.id, reason: safeErrorText(outcome.outdated) }, 'dropped a stored instant-refund consent that no longer applies');
      return;
    }
    pass.instantRefunded.push(order.id);
    this.log.info({ order: order.id, chain: order.source.chain, tx: outcome.job.txHash }, 'instantly refunded the failed order with the client\'s consent');
  }

  private async refundDestination(order: OrderRecord, pass: SolverPass): Promise<void> {
    const dst = this.chains.get(order.destination.chain);
    if (dst && (await dst.refundDestination(order))) {
      pass.refunded.push(order.id);
      this.log.info({ order: order.id, chain: dst.chain.key }, 'refunded the expired destination');
    }
  }
}

/** Runs `task` over `items`, at most `limit` at once. */
async function forEachLimit<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Rule 3: a secret is exactly 32 bytes and its sha256 is the order's secret hash. */
export function opensSecretHash(secret: Uint8Array, secretHash: string): boolean {
  return secret.length === 32 && createHash('sha256').update(secret).digest('hex') === secretHash.toLowerCase();
}
