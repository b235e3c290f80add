// `npm run chaos -- --swaps N --seed S`: an operator's bad day, replayable from its seed. Swaps on
// every family through two `hashlock serve` instances on PostgreSQL and an external maker, faults
// struck at the seed's moments (nodes cut off or slowed, database connections terminated, PostgreSQL
// restarted, processes killed, reorganisations), then every swap checked on the chains themselves.
// Exits 1 on any violation. See docs/operations.md, "Chaos runs".
import { parseArgs } from 'node:util';
import { runChaos } from './chaos.ts';
import { FAULT_KINDS, type FaultKind } from './schedule.ts';

const { values } = parseArgs({
  options: {
    swaps: { type: 'string', default: '200' },
    seed: { type: 'string' },
    'every-ms': { type: 'string', default: '3000' },
    faults: { type: 'string' },
    'fault-min-s': { type: 'string', default: '10' },
    'fault-max-s': { type: 'string', default: '120' },
    'source-s': { type: 'string', default: '180' },
    'destination-s': { type: 'string', default: '90' },
    'margin-s': { type: 'string', default: '25' },
    confirmations: { type: 'string', default: '3' },
    without: { type: 'string', default: '' },
  },
});
const swaps = Number(values.swaps);
const everyMs = Number(values['every-ms']);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const without = values.without.split(',').filter(Boolean) as FaultKind[];
for (const k of without) if (!FAULT_KINDS.includes(k)) throw new Error(`--without ${k}: not one of ${FAULT_KINDS.join(', ')}`);
const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);

const result = await runChaos({
  swaps,
  seed,
  everyMs,
  // One fault per 30 s of clients starting, by default.
  faults: values.faults === undefined ? Math.max(3, Math.round((swaps * everyMs) / 30_000)) : Number(values.faults),
  faultMinMs: Number(values['fault-min-s']) * 1_000,
  faultMaxMs: Number(values['fault-max-s']) * 1_000,
  times: { sourceSeconds: Number(values['source-s']), destinationSeconds: Number(values['destination-s']), marginSeconds: Number(values['margin-s']), confirmations: Number(values.confirmations) },
  without,
  log,
});
console.log(`\nseed ${seed}, ${swaps} swaps, ${((Date.now() - started) / 60_000).toFixed(1)} min\n${result.table}`);
process.exit(result.violations.length > 0 ? 1 : 0);
