// One chaos run: the world up, the clients started at their planned moments and the faults struck at
// theirs, everything seen through to completed or refunded, then the chains read and checked.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlockClock } from './block-clock.ts';
import { balanceReadings, broadcastDeadlines, markChains, readBalances, swapFacts, tronAnvil } from './chains.ts';
import { Clients, runSwap, type SwapRecord } from './clients.ts';
import { runFault, type FaultRecord } from './faults.ts';
import { checkInvariants, CHAIN_OF, outcomeOf, type Observation, type SwapFacts, type Violation } from './invariants.ts';
import { report } from './report.ts';
import { makeSchedule, printSchedule, type FaultKind, type Schedule } from './schedule.ts';
import { openChaosWorld, MAKER_ID, type ChaosWorld, type WorldTimes } from './world.ts';

export interface ChaosOptions {
  swaps: number;
  seed: number;
  /** Milliseconds between two clients' starts. */
  everyMs: number;
  faults: number;
  faultMinMs: number;
  faultMaxMs: number;
  times: WorldTimes;
  without?: readonly FaultKind[];
  log: (line: string) => void;
}

export interface ChaosResult {
  schedule: Schedule;
  records: SwapRecord[];
  faults: FaultRecord[];
  observation: Observation;
  violations: Violation[];
  table: string;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Rule 2's window of these times: past it the solvers no longer fund. */
export const rule2WindowMs = (t: WorldTimes): number => (t.sourceSeconds - t.destinationSeconds - t.marginSeconds) * 1_000;

export function scheduleOf(o: Omit<ChaosOptions, 'log'>): Schedule {
  return makeSchedule(o.seed, {
    swaps: o.swaps,
    everyMs: o.everyMs,
    faults: o.faults,
    faultMinMs: o.faultMinMs,
    faultMaxMs: o.faultMaxMs,
    makerOutageMs: rule2WindowMs(o.times) + 25_000,
    confirmations: o.times.confirmations,
    ...(o.without ? { without: o.without } : {}),
  });
}

/** Until the service quotes every route, and the maker its WBTC one (each reads its balances every few seconds at start). */
async function warmUp(w: ChaosWorld, api: Clients): Promise<void> {
  const asks = [
    ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', 100_000n, true],
    ['ethereum_localnet:wbtc', 'litecoin_localnet:ltc', 50_000n, true],
    ['litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', 50_000_000n, false],
    ['solana_localnet:sol', 'arbitrum_localnet:wbtc', 200_000_000n, false],
    ['tron_localnet:usdt', 'arbitrum_localnet:wbtc', 10_000_000n, false],
  ] as const;
  for (const [from, to, amount, maker] of asks) {
    for (const end = Date.now() + 90_000; ; await pause(500)) {
      const res = await api.request('GET', `/v2/quote?from=${from}&to=${to}&from_amount=${amount}`);
      const quotes = res?.status === 200 ? (res.body.result as Array<{ solver_id: string }>) : [];
      if (quotes.length > 0 && (!maker || quotes.some((q) => q.solver_id === MAKER_ID))) break;
      if (Date.now() > end) throw new Error(`no quote ${from} -> ${to}${maker ? ' from the maker' : ''}: ${JSON.stringify(res?.body)}`);
    }
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const schedule = scheduleOf(o);
  o.log(printSchedule(schedule));
  const w = await openChaosWorld(o.times, o.log);
  const clock = new BlockClock(w, tronAnvil(w));
  clock.start();
  try {
    const api = new Clients(w);
    await warmUp(w, api);
    const mark = await markChains(w);
    api.answers.length = 0;
    const t0 = Date.now();
    const at = (ms: number) => pause(Math.max(0, t0 + ms - Date.now()));
    o.log(`t0: ${new Date(t0).toISOString()}`);
    const faultRuns = schedule.faults.map((f) => at(f.at).then(() => runFault(w, f, o.log)));
    // A client sees its swap through, or gives up: past its source timelock and the refund's time.
    const windowMs = 2 * o.times.sourceSeconds * 1_000 + 180_000;
    const done: SwapRecord[] = [];
    const swapRuns = schedule.swaps.map((p) =>
      at(p.at)
        .then(() => runSwap(w, api, p, t0 + p.at + windowMs, o.log))
        .then((r) => (done.push(r), r)),
    );
    const progress = setInterval(() => {
      const by = (outcome: string) => done.filter((r) => r.outcome === outcome).length;
      o.log(`t+${((Date.now() - t0) / 1000).toFixed(0)} s: ${done.length}/${schedule.swaps.length} clients done (${by('completed')} completed, ${by('refunded')} refunded, ${by('unsettled')} unsettled)`);
    }, 30_000);
    let records: SwapRecord[];
    let faults: FaultRecord[];
    try {
      [records, faults] = await Promise.all([Promise.all(swapRuns), Promise.all(faultRuns)]);
    } finally {
      clearInterval(progress);
    }
    o.log(`every client done at t+${((Date.now() - t0) / 1000).toFixed(0)} s; settling`);

    // The solvers' last steps (a destination refund, a source redeem, a Litecoin spend still unmined).
    const deadlinesLater = () => new Map<string, number>();
    let facts: SwapFacts[] = [];
    for (const end = Date.now() + 180_000; ; await pause(5_000)) {
      facts = await swapFacts(w, clock, mark, records, deadlinesLater());
      const open = facts.filter((s) => outcomeOf(s) === 'unsettled' || [s.source, s.destination].some((side) => side.htlc.initiates.length > 0 && side.htlc.redeems.length + side.htlc.refunds.length === 0) || [s.source, s.destination].some((side) => [...side.htlc.initiates, ...side.htlc.redeems, ...side.htlc.refunds].some((t) => t.at === undefined)));
      if (open.length === 0 || Date.now() > end) break;
    }
    const after = await readBalances(w);
    const deadlines = await broadcastDeadlines(w);
    facts = await swapFacts(w, clock, mark, records, deadlines);
    const observation: Observation = {
      now: Date.now(),
      swaps: facts,
      balances: balanceReadings(mark.balances, after),
      answers: api.answers,
      faults: faults.map((f) => ({ kind: f.planned.fault.kind, ...('node' in f.planned.fault ? { node: f.planned.fault.node } : {}), from: f.from, to: f.to })),
      blockMs: Object.fromEntries(Object.values(CHAIN_OF).map((key) => [key, w.world.registry.chain(key)!.blockTimeMs])),
    };
    const violations = checkInvariants(observation);
    if (violations.length > 0) o.log(`the instances' and the maker's logs are kept in ${keepLogs(w)}`);
    const table = report(facts, schedule.swaps.length, faults, violations, api.answers.length);
    return { schedule, records, faults, observation, violations, table };
  } finally {
    await clock.stop();
    await w.close();
  }
}

/** Writes what the instances and the maker printed (their logs) beside each other, for a violation's post-mortem; answers the folder. */
function keepLogs(w: ChaosWorld): string {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-chaos-logs-'));
  writeFileSync(join(dir, 'instance-a.log'), w.instances[0].output());
  writeFileSync(join(dir, 'instance-b.log'), w.instances[1].output());
  writeFileSync(join(dir, 'maker.log'), w.maker.output());
  return dir;
}
