import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from '../../clock.ts';
import { AppError, ERROR_CODES, type ErrorCode } from '../../errors.ts';
import type { Log } from '../../log.ts';
import type { Worker } from '../../lease-loop.ts';
import type { SecretBox } from '../../orders/secret-box.ts';
import { jobKey, RELAYER_ACTIONS, type RelayerAction } from '../../relayer/actions.ts';
import type { Db } from '../../store/database.ts';
import { findOrder, type OrderRecord } from '../../store/orders.ts';
import { findJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import { pendingSpendRequests, requestSpend, settleSpendRequest, spendRequestsWake, spendRequestState, type SpendRequest } from './store/spend-requests.ts';

/**
 * A Bitcoin-family action that signs with a key an instance does not hold (the client's key the
 * service holds, on an API instance; the solver's, for an instant refund) is handed to the worker
 * instances: the instance writes the request, its body sealed to the workers' key, and waits a few
 * seconds; a worker opens it and performs the same action, writing its job, or records why it refused.
 */

/** How long a request waits for a worker instance to sign it, and how often it looks. */
export interface WorkerWait {
  waitMs: number;
  pollMs: number;
}

export const DEFAULT_WORKER_WAIT: WorkerWait = { waitMs: 5_000, pollMs: 100 };

/** Thrown inside an action where it needs a key this instance lacks: `BitcoinActions.perform` hands it to the workers. */
export class SignedByWorkers extends AppError {
  constructor(why: string) {
    super('unavailable', why);
  }
}

/**
 * Writes the request for `action` on `chain` (or finds the pending one) and waits for a worker's
 * answer: the job it wrote, its refusal as the same error, or 503 when none answered in time; the
 * request stays pending then, for a retry to find.
 */
export async function askWorkers(
  db: Db,
  secrets: SecretBox,
  request: { order: OrderRecord; action: RelayerAction; chain: string; body: unknown },
  options: { wait?: Partial<WorkerWait>; clock?: Clock } = {},
): Promise<RelayerJob> {
  const { waitMs, pollMs } = { ...DEFAULT_WORKER_WAIT, ...options.wait };
  const { order, action } = request;
  const key = jobKey(order.id, action);
  const sealedBody = secrets.seal(Buffer.from(JSON.stringify(request.body ?? {})));
  await requestSpend(db, request.chain, { idempotencyKey: key, orderId: order.id, action, sealedBody }, new Date((options.clock ?? systemClock).now()));
  const deadline = performance.now() + waitMs;
  for (;;) {
    const job = await findJob(db, key);
    if (job) return job;
    const state = await spendRequestState(db, key);
    if (state?.status === 'refused') throw new AppError(knownCode(state.errorCode), state.errorMessage);
    if (performance.now() >= deadline) break;
    await sleep(Math.min(pollMs, Math.max(deadline - performance.now(), 0)));
  }
  throw new AppError(
    'unavailable',
    `order ${order.id}: ${action} signs with a key this instance does not hold, and no worker instance signed it within ${waitMs / 1000} s; retry`,
  );
}

/** What a worker does with a request: the action as the requesting instance would have performed it, never handed on. */
export type PerformForwarded = (order: OrderRecord, action: RelayerAction, body: unknown) => Promise<RelayerJob>;

/**
 * One pass over the pending requests on `chain`: each performed, then marked done, or refused with
 * the action's error (its code and message: never the secret, rule 7). A node outage leaves the
 * request pending for the next pass. Returns whether the batch was full.
 */
export async function signSpendRequests(
  db: Db,
  chain: string,
  secrets: SecretBox,
  perform: PerformForwarded,
  options: { clock?: Clock; log?: Log; batch?: number } = {},
): Promise<{ full: boolean }> {
  const batch = options.batch ?? 20;
  const clock = options.clock ?? systemClock;
  const requests = await pendingSpendRequests(db, chain, batch);
  for (const request of requests) {
    const outcome = await performRequest(db, secrets, perform, request);
    if (outcome === 'retry') {
      options.log?.warn({ chain, order: request.orderId, action: request.action }, 'a requested spend waits for the node');
      continue;
    }
    await settleSpendRequest(db, request.idempotencyKey, outcome, new Date(clock.now()));
  }
  return { full: requests.length === batch };
}

async function performRequest(
  db: Db,
  secrets: SecretBox,
  perform: PerformForwarded,
  request: SpendRequest,
): Promise<{ status: 'done' } | { status: 'refused'; code: string; message: string } | 'retry'> {
  const action = RELAYER_ACTIONS.find((a) => a === request.action);
  const order = await findOrder(db, request.orderId);
  if (!action || !order) return { status: 'refused', code: 'internal', message: `the requested ${request.action} of order ${request.orderId} is not one a worker performs` };
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(secrets.open(request.sealedBody)).toString('utf8'));
  } catch {
    return { status: 'refused', code: 'internal', message: `order ${order.id}: the body of the requested ${action} cannot be opened by the worker instances` };
  }
  try {
    await perform(order, action, body);
    return { status: 'done' };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'chain_unavailable') return 'retry';
    return { status: 'refused', code: err.code, message: err.message };
  }
}

/** The worker that signs the requests on `chain`, on an instance whose secret box opens; woken as a request is written. */
export function spendRequestWorker(
  db: Db,
  chain: string,
  secrets: SecretBox,
  perform: PerformForwarded,
  options: { clock: Clock; log: Log },
): Worker {
  return {
    lease: `spend-requests:${chain}`,
    wakeOnJob: spendRequestsWake(chain),
    intervalMs: 1_000,
    tick: async (_signal, wake) => {
      if ((await signSpendRequests(db, chain, secrets, perform, options)).full) wake();
    },
  };
}

const knownCode = (code: string): ErrorCode => ERROR_CODES.find((c) => c === code) ?? 'internal';
