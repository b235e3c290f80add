// The run's table: per family, swaps, completed, refunded, unsettled and violations; the faults
// injected by kind; then each violation.
import type { FaultRecord } from './faults.ts';
import { outcomeOf, type SwapFacts, type Violation } from './invariants.ts';
import { ROUTES } from './schedule.ts';

const row = (cells: Array<string | number>, widths: number[]) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');

export function report(swaps: SwapFacts[], planned: number, faults: FaultRecord[], violations: Violation[], answers: number): string {
  const widths = [16, 6, 10, 9, 13, 10, 11];
  const lines = [row(['family', 'swaps', 'completed', 'refunded', 'never funded', 'unsettled', 'violations'], widths)];
  const total = { swaps: 0, completed: 0, refunded: 0, never: 0, unsettled: 0, violations: 0 };
  for (const family of ROUTES) {
    const mine = swaps.filter((s) => s.family === family);
    const counts = {
      swaps: mine.length,
      completed: mine.filter((s) => outcomeOf(s) === 'completed').length,
      refunded: mine.filter((s) => outcomeOf(s) === 'refunded').length,
      never: mine.filter((s) => outcomeOf(s) === 'never funded').length,
      unsettled: mine.filter((s) => outcomeOf(s) === 'unsettled').length,
      violations: violations.filter((v) => v.family === family).length,
    };
    for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += counts[k];
    lines.push(row([family, counts.swaps, counts.completed, counts.refunded, counts.never, counts.unsettled, counts.violations], widths));
  }
  const global = violations.filter((v) => v.family === 'all').length;
  lines.push(row(['(balances, http)', '', '', '', '', '', global], widths));
  lines.push(row(['total', total.swaps, total.completed, total.refunded, total.never, total.unsettled, total.violations + global], widths));
  if (total.swaps < planned) lines.push(`${planned - total.swaps} planned swap(s) never got an order`);
  const byKind = new Map<string, { n: number; failed: number }>();
  for (const f of faults) {
    const k = byKind.get(f.planned.fault.kind) ?? { n: 0, failed: 0 };
    byKind.set(f.planned.fault.kind, { n: k.n + 1, failed: k.failed + (f.error ? 1 : 0) });
  }
  lines.push('', `faults injected: ${[...byKind].map(([kind, k]) => `${kind} ${k.n}${k.failed ? ` (${k.failed} failed to inject)` : ''}`).join(', ') || 'none'}`);
  lines.push(`HTTP answers recorded: ${answers}`);
  if (violations.length > 0) {
    lines.push('', 'violations:');
    for (const v of violations) lines.push(`  [${v.rule}] ${v.family}${v.swap !== undefined ? ` #${v.swap}` : ''}: ${v.detail}`);
  }
  return lines.join('\n');
}
