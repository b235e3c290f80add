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

/**
 * The other `status` values Garden's clients send, as unions of the groups: its SDK's executor
 * lists `pending` orders (not finished: its `isCompleted` is redeemed, refunded or expired), and
 * `fulfilled` ones are those whose client is paid; `all` is every order.
 */
export const STATUS_ALIASES = {
  pending: ['not-initiated', 'in-progress'],
  fulfilled: ['completed'],
  all: STATUS_GROUP_NAMES,
} as const satisfies Record<string, readonly StatusGroup[]>;

/** Every accepted `status` value: the groups, then the aliases. */
export const STATUS_FILTER_NAMES: readonly string[] = [...STATUS_GROUP_NAMES, ...Object.keys(STATUS_ALIASES)];

/** The groups a `status` value stands for, or undefined when it is none. */
export function statusFilterGroups(value: string): readonly StatusGroup[] | undefined {
  if (isStatusGroup(value)) return [value];
  return Object.hasOwn(STATUS_ALIASES, value) ? STATUS_ALIASES[value as keyof typeof STATUS_ALIASES] : undefined;
}

/** The group a status belongs to (every status belongs to exactly one). */
export function statusGroup(status: OrderStatus): StatusGroup {
  return STATUS_GROUP_NAMES.find((g) => (STATUS_GROUPS[g] as readonly OrderStatus[]).includes(status))!;
}
