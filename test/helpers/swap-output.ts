// What `hashlock swap` printed, read back by the CLI swap tests: its balances before and after, the
// change between them, and the quoted destination amount. Each throws (an assertion) naming what is missing.
import assert from 'node:assert/strict';

/** The balance the swap printed for `asset` in its "before" or "after" block. */
export function printed(stdout: string, label: 'before' | 'after', asset: string): bigint {
  const m = new RegExp(`^\\s*${label}\\s+${asset.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+(\\d+)`, 'm').exec(stdout);
  assert.ok(m, `no "${label}" balance of ${asset} in:\n${stdout}`);
  return BigInt(m[1]!);
}

/** The printed balance of `asset` after the swap less the one before. */
export const change = (stdout: string, asset: string): bigint => printed(stdout, 'after', asset) - printed(stdout, 'before', asset);

/** The destination amount of the printed quote line. */
export function quoted(stdout: string): bigint {
  const m = /^Quote: \d+ \S+ -> (\d+) /m.exec(stdout);
  assert.ok(m, `no quote line in:\n${stdout}`);
  return BigInt(m[1]!);
}
