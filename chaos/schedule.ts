// The run's plan, drawn from its seed alone: when each client starts its swap and what kind of client
// it is, and when each fault strikes, on what, for how long. The same seed and options give the same
// plan; what the service does with it is then up to the service.
import { mulberry32 } from '../test/helpers/seeded-random.ts';

/** The routes the clients swap on, each a family the service settles. */
export const ROUTES = ['evm', 'evm-ltc', 'ltc-evm', 'sol-evm', 'tron-evm'] as const;
export type Route = (typeof ROUTES)[number];
/** Routes the external maker also quotes. */
export const MAKER_ROUTES: ReadonlySet<Route> = new Set(['evm', 'evm-ltc', 'ltc-evm']);

export const NODES = ['eth', 'arb', 'ltc', 'sol', 'tron'] as const;
export type NodeName = (typeof NODES)[number];

export type Fault =
  | { kind: 'node-cut'; node: NodeName }
  | { kind: 'node-slow'; node: NodeName; delayMs: number }
  | { kind: 'pg-terminate' }
  | { kind: 'pg-restart' }
  | { kind: 'kill-instance'; instance: 0 | 1 }
  | { kind: 'kill-maker' }
  /** The maker killed and kept down past rule 2's window: the swaps it had matched refund. */
  | { kind: 'maker-outage' }
  | { kind: 'reorg'; node: 'eth' | 'arb' | 'ltc'; depth: number };
export type FaultKind = Fault['kind'];
export const FAULT_KINDS: readonly FaultKind[] = ['node-cut', 'node-slow', 'pg-terminate', 'pg-restart', 'kill-instance', 'kill-maker', 'maker-outage', 'reorg'];

export interface PlannedFault {
  /** Milliseconds from the run's start. */
  at: number;
  durationMs: number;
  fault: Fault;
}

export interface PlannedSwap {
  index: number;
  at: number;
  route: Route;
  /** Reverse direction where the route has two (evm: arbitrum -> ethereum). */
  reverse: boolean;
  /** The client asks the external maker for it (when the maker quotes it then). */
  maker: boolean;
  /** The client keeps the secret and redeems its destination itself. */
  clientSecret: boolean;
  /** The client keeps the secret and vanishes after initiating: both sides end refunded. */
  abandon: boolean;
}

export interface ScheduleOptions {
  swaps: number;
  /** Milliseconds between two clients' starts. */
  everyMs: number;
  faults: number;
  /** A node cut off or slowed, PostgreSQL down: between these, in ms. */
  faultMinMs: number;
  faultMaxMs: number;
  /** How long a maker outage lasts: past rule 2's window. */
  makerOutageMs: number;
  /** Reorgs stay shallower than this (the chains' confirmation target). */
  confirmations: number;
  /** Fault kinds left out. */
  without?: readonly FaultKind[];
}

export interface Schedule {
  seed: number;
  swaps: PlannedSwap[];
  faults: PlannedFault[];
}

/** What a fault holds while it lasts; two faults on one of them never overlap. */
export function faultTarget(f: Fault): string {
  switch (f.kind) {
    case 'node-cut':
    case 'node-slow':
    case 'reorg':
      return f.node;
    case 'pg-terminate':
    case 'pg-restart':
      return 'postgres';
    case 'kill-instance':
      return `instance-${f.instance}`;
    case 'kill-maker':
    case 'maker-outage':
      return 'maker';
  }
}

export function makeSchedule(seed: number, o: ScheduleOptions): Schedule {
  const random = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const between = (min: number, max: number) => Math.round(min + random() * (max - min));
  const swaps: PlannedSwap[] = Array.from({ length: o.swaps }, (_, index) => {
    // Every route at least once in each round of five, the rest at random.
    const route = index < ROUTES.length ? ROUTES[index]! : pick(ROUTES);
    const abandon = random() < 0.06;
    return {
      index,
      at: index * o.everyMs,
      route,
      reverse: random() < 0.5,
      maker: MAKER_ROUTES.has(route) && random() < 0.35,
      clientSecret: abandon || random() < 0.25,
      abandon,
    };
  });
  // At least one abandoned swap per run once there are a few, so that refunds are always exercised.
  if (o.swaps >= ROUTES.length && !swaps.some((s) => s.abandon)) {
    const s = swaps[ROUTES.length - 1 - Math.floor(random() * 2)]!;
    Object.assign(s, { abandon: true, clientSecret: true });
  }

  const kinds = FAULT_KINDS.filter((k) => !o.without?.includes(k));
  const span = Math.max(o.swaps * o.everyMs, 30_000);
  const faults: PlannedFault[] = [];
  const draw = (kind: FaultKind): PlannedFault => {
    const at = between(5_000, span);
    switch (kind) {
      case 'node-cut':
        return { at, durationMs: between(o.faultMinMs, o.faultMaxMs), fault: { kind, node: pick(NODES) } };
      case 'node-slow':
        return { at, durationMs: between(o.faultMinMs, o.faultMaxMs), fault: { kind, node: pick(NODES), delayMs: between(1_000, 5_000) } };
      case 'pg-terminate':
        return { at, durationMs: between(2_000, 6_000), fault: { kind } };
      case 'pg-restart':
        return { at, durationMs: between(2_000, Math.min(15_000, o.faultMaxMs)), fault: { kind } };
      case 'kill-instance':
        return { at, durationMs: between(2_000, 8_000), fault: { kind, instance: random() < 0.5 ? 0 : 1 } };
      case 'kill-maker':
        return { at, durationMs: between(2_000, 8_000), fault: { kind } };
      case 'maker-outage':
        return { at, durationMs: o.makerOutageMs, fault: { kind } };
      case 'reorg':
        return { at, durationMs: 0, fault: { kind, node: pick(['eth', 'arb', 'ltc'] as const), depth: between(1, Math.max(1, o.confirmations - 1)) } };
    }
  };
  const overlaps = (f: PlannedFault) =>
    faults.some((g) => faultTarget(g.fault) === faultTarget(f.fault) && f.at < g.at + g.durationMs + 5_000 && g.at < f.at + f.durationMs + 5_000);
  // One maker outage per run (when the kind is in), the rest drawn by kind in turn so every kind shows.
  const wanted = kinds.includes('maker-outage') ? ['maker-outage' as const, ...Array.from({ length: Math.max(0, o.faults - 1) }, (_, i) => kinds.filter((k) => k !== 'maker-outage')[i % (kinds.length - 1)]!)] : Array.from({ length: o.faults }, (_, i) => kinds[i % kinds.length]!);
  for (const kind of wanted.slice(0, o.faults)) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const f = draw(kind);
      if (!overlaps(f)) {
        faults.push(f);
        break;
      }
    }
  }
  faults.sort((a, b) => a.at - b.at);
  return { seed, swaps, faults };
}

export function describeFault(f: Fault): string {
  switch (f.kind) {
    case 'node-cut':
      return `${f.node} node cut off`;
    case 'node-slow':
      return `${f.node} node answers ${f.delayMs} ms late`;
    case 'pg-terminate':
      return "the service database's connections terminated every 0.5 s";
    case 'pg-restart':
      return 'PostgreSQL stopped, then started';
    case 'kill-instance':
      return `kill -9 of instance ${f.instance === 0 ? 'A' : 'B'}, restarted after`;
    case 'kill-maker':
      return 'kill -9 of the maker, restarted after';
    case 'maker-outage':
      return 'kill -9 of the maker, kept down past rule 2';
    case 'reorg':
      return `${f.node} reorganised ${f.depth} block(s) deep, a longer branch mined`;
  }
}

/** The plan as the run prints it first. */
export function printSchedule(s: Schedule): string {
  const lines = [`seed ${s.seed}: ${s.swaps.length} swaps, ${s.faults.length} faults`];
  const byRoute = new Map<string, number>();
  for (const w of s.swaps) byRoute.set(w.route, (byRoute.get(w.route) ?? 0) + 1);
  lines.push(
    `swaps: ${[...byRoute].map(([r, n]) => `${r} ${n}`).join(', ')}; to the maker ${s.swaps.filter((w) => w.maker).length}, client-held secrets ${s.swaps.filter((w) => w.clientSecret).length}, abandoned ${s.swaps.filter((w) => w.abandon).map((w) => `#${w.index}`).join(' ') || 'none'}; one every ${s.swaps[1] ? s.swaps[1].at / 1000 : 0} s`,
  );
  for (const f of s.faults) lines.push(`  t+${(f.at / 1000).toFixed(1).padStart(6)} s  ${describeFault(f.fault)}${f.durationMs ? ` for ${(f.durationMs / 1000).toFixed(1)} s` : ''}`);
  return lines.join('\n');
}
