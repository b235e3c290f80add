// What the benches share to report their runs: a table row, the nearest-rank quantile, a process's memory.
import { readFileSync } from 'node:fs';

/** A row of a bench's table: column -> value. */
export type Row = Record<string, string | number>;

/** The value at fraction `q` of the sorted values (nearest rank); NaN for none. */
export const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

/** A process's resident memory in MB (VmRSS), or NaN once it is gone. */
export function rssMb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}
