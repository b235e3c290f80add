/** A failure `hashlock swap` reports in one line (exit code 1). */
export class SwapError extends Error {}
