import type { Db } from '../store/database.ts';
import { findJob, type RelayerJob } from '../store/relayer-jobs.ts';

/** The HTLC actions clients ask the service for (PATCH /v2/orders/{id}?action=...). */
export const RELAYER_ACTIONS = ['initiate', 'redeem', 'refund', 'instant-refund'] as const;
export type RelayerAction = (typeof RELAYER_ACTIONS)[number];

/** One job per order and action, however often or concurrently it is asked for (safety rule 6). */
export const jobKey = (orderId: string, action: RelayerAction): string => `${orderId}:${action}`;

/** The job of an earlier request for this action, still live; a failed one is asked for again. */
export async function liveActionJob(db: Db, orderId: string, action: RelayerAction): Promise<RelayerJob | undefined> {
  const job = await findJob(db, jobKey(orderId, action));
  return job && job.status !== 'failed' ? job : undefined;
}
