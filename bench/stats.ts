// What the benches share to report their runs: a table row and the nearest-rank quantile.

/** A row of a bench's table: column -> value. */
export type Row = Record<string, string | number>;

/** The value at fraction `q` of the sorted values (nearest rank); NaN for none. */
export const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
