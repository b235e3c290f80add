import { systemClock, type Clock } from '../clock.ts';
import { safeErrorText } from '../errors.ts';

export interface NodeProblem {
  chain: string;
  /** When its node stopped answering (ISO 8601). */
  since: string;
  error: string;
}

/**
 * Which chains' nodes this instance cannot reach, from what its chain workers meet: a worker's pass
 * that failed marks the chain, that worker's next pass that succeeds clears its mark (the transaction
 * engine's passes do not fail for a node, they wait for it, so only the workers that do fail speak).
 * `/health` names a chain whose node has been out of reach longer than `degradedAfterMs` as degraded;
 * liveness is not failed for it, since the service waits for the node and goes on by itself.
 */
export class NodeHealth {
  private readonly down = new Map<string, { chain: string; sinceMs: number; error: string }>();

  constructor(
    readonly degradedAfterMs = 30_000,
    private readonly clock: Clock = systemClock,
  ) {}

  answered(chain: string, worker: string): void {
    this.down.delete(`${chain}\u0000${worker}`);
  }

  failed(chain: string, worker: string, err: unknown): void {
    const key = `${chain}\u0000${worker}`;
    this.down.set(key, { chain, sinceMs: this.down.get(key)?.sinceMs ?? this.clock.now(), error: safeErrorText(err).slice(0, 200) });
  }

  /** The chains out of reach for longer than `degradedAfterMs`, each with its longest-failing worker's error. */
  degraded(now = this.clock.now()): NodeProblem[] {
    const byChain = new Map<string, { sinceMs: number; error: string }>();
    for (const d of this.down.values()) {
      const known = byChain.get(d.chain);
      if (!known || d.sinceMs < known.sinceMs) byChain.set(d.chain, d);
    }
    return [...byChain]
      .filter(([, d]) => now - d.sinceMs >= this.degradedAfterMs)
      .map(([chain, d]) => ({ chain, since: new Date(d.sinceMs).toISOString(), error: d.error }));
  }
}
