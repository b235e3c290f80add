import { systemClock, type Clock } from '../clock.ts';
import { safeErrorText } from '../errors.ts';

export interface NodeProblem {
  chain: string;
  /** When its node stopped answering, or its checks started failing (ISO 8601). */
  since: string;
  error: string;
  /** The preflight checks of the chain that fail (`hashlock preflight`'s, run by the service every minute). */
  checks?: Array<{ check: string; detail: string }>;
}

/** A failed check of the chain's deployment, as `NodeHealth` keeps it. */
interface FailedCheck {
  check: string;
  detail: string;
  sinceMs: number;
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
  private readonly failedChecks = new Map<string, FailedCheck[]>();
  private checkStatus: ReadonlyArray<{ chain: string; check: string; status: number }> = [];

  constructor(
    readonly degradedAfterMs = 30_000,
    private readonly clock: Clock = systemClock,
  ) {}

  answered(chain: string, worker: string): void {
    this.down.delete(`${chain}\u0000${worker}`);
  }

  failed(chain: string, worker: string, err: unknown): void {
    const key = `${chain}\u0000${worker}`;
    this.down.set(key, {
      chain,
      sinceMs: this.down.get(key)?.sinceMs ?? this.clock.now(),
      // The first line only: a client's later lines name the request's URL, which may carry the node's API key.
      error: safeErrorText(err).split('\n')[0]!.slice(0, 200),
    });
  }

  /**
   * The latest run of the chains' preflight checks (every chain's rows): a chain with a failing check
   * is degraded until a run passes it; a check that keeps failing keeps the time it first failed.
   */
  checked(rows: ReadonlyArray<{ scope: string; check: string; status: 'ok' | 'warn' | 'error'; detail: string }>): void {
    const now = this.clock.now();
    const failing = new Map<string, FailedCheck[]>();
    for (const row of rows.filter((r) => r.status === 'error')) {
      const before = this.failedChecks.get(row.scope)?.find((c) => c.check === row.check);
      failing.set(row.scope, [...(failing.get(row.scope) ?? []), { check: row.check, detail: row.detail, sinceMs: before?.sinceMs ?? now }]);
    }
    this.failedChecks.clear();
    for (const [chain, checks] of failing) this.failedChecks.set(chain, checks);
    this.checkStatus = rows.map((r) => ({ chain: r.scope, check: r.check, status: r.status === 'ok' ? 0 : r.status === 'warn' ? 1 : 2 }));
  }

  /** Each check's status in the latest run: 0 ok, 1 warning, 2 error. */
  checkStatuses(): ReadonlyArray<{ chain: string; check: string; status: number }> {
    return this.checkStatus;
  }

  /**
   * The chains out of reach for longer than `degradedAfterMs`, each with its longest-failing worker's
   * error, and the chains whose preflight checks fail, with those checks.
   */
  degraded(now = this.clock.now()): NodeProblem[] {
    const byChain = new Map<string, { sinceMs: number; error: string; checks?: FailedCheck[] }>();
    for (const d of this.down.values()) {
      if (now - d.sinceMs < this.degradedAfterMs) continue;
      const known = byChain.get(d.chain);
      if (!known || d.sinceMs < known.sinceMs) byChain.set(d.chain, d);
    }
    for (const [chain, checks] of this.failedChecks) {
      const sinceMs = Math.min(...checks.map((c) => c.sinceMs));
      const known = byChain.get(chain);
      const error = `${checks[0]!.check}: ${checks[0]!.detail}`;
      byChain.set(chain, known ? { ...known, sinceMs: Math.min(known.sinceMs, sinceMs), checks } : { sinceMs, error, checks });
    }
    return [...byChain].map(([chain, d]) => ({
      chain,
      since: new Date(d.sinceMs).toISOString(),
      error: d.error,
      ...(d.checks ? { checks: d.checks.map(({ check, detail }) => ({ check, detail })) } : {}),
    }));
  }
}
