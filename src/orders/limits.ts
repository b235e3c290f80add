/** Bounds of what a client may ask for (documented in docs/api.md). */
export const MAX_SLIPPAGE_BIPS = 500;
export const MAX_AFFILIATE_FEE_BIPS = 1000;
export const MAX_AFFILIATE_FEES = 5;
/** Latest initiation of the source, counted from creation (DESIGN.md section 2). */
export const DEADLINE_SECONDS = 3600;
export const BITCOIN_SOURCE_DEADLINE_SECONDS = 6 * 3600;
