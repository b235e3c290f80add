import type { OrderStatus } from './status.ts';

/** The `status` filter values of `GET /v2/orders` (Garden's groups) and the statuses each one holds. */
export const STATUS_GROUPS = {
  'not-initiated': ['created'],
  'in-progress': ['initiate_detected', 'initiated', 'awaiting_redeem', 'awaiting_refund', 'redeem_detected', 'refund_detected'],
  completed: ['redeemed', 'completed'],
  expired: ['expired'],
  refunded: ['refunded'],
} as const satisfies Record<string, readonly OrderStatus[]>;

export type StatusGroup = keyof typeof STATUS_GROUPS;

export const STATUS_GROUP_NAMES = Object.keys(STATUS_GROUPS) as StatusGroup[];

export function isStatusGroup(value: string): value is StatusGroup {
  return Object.hasOwn(STATUS_GROUPS, value);
}

/** The group a status belongs to (every status belongs to exactly one). */
export function statusGroup(status: OrderStatus): StatusGroup {
  return STATUS_GROUP_NAMES.find((g) => (STATUS_GROUPS[g] as readonly OrderStatus[]).includes(status))!;
}
