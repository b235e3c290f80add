/** The HTLC actions clients ask the service for (PATCH /v2/orders/{id}?action=...). */
export const RELAYER_ACTIONS = ['initiate', 'redeem', 'refund', 'instant-refund'] as const;
export type RelayerAction = (typeof RELAYER_ACTIONS)[number];

/** One job per order and action, however often or concurrently it is asked for (safety rule 6). */
export const jobKey = (orderId: string, action: RelayerAction): string => `${orderId}:${action}`;
