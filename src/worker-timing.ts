import { Histogram } from 'prom-client';
import type { Worker } from './lease-loop.ts';

/**
 * How long each worker's passes take (a chain's watcher and senders, the solver, the order event
 * recorder), shown by /metrics as `hashlock_worker_pass_seconds{worker}`. A swap's settlement is a
 * chain of such passes, so the stage that holds it up is the worker whose passes grow.
 */
export class WorkerTiming {
  readonly passes = new Histogram({
    name: 'hashlock_worker_pass_seconds',
    help: 'Duration of one pass of a worker (by lease name: watcher:<chain>, engine:<chain>:<signer>, solver:<id>, order-events)',
    labelNames: ['worker'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [],
  });

  /** The worker with each pass timed, failed ones included. */
  timed<W extends Pick<Worker, 'lease' | 'tick'>>(worker: W): W {
    return {
      ...worker,
      tick: async (signal: AbortSignal, wake: () => void) => {
        const end = this.passes.startTimer({ worker: worker.lease });
        try {
          return await worker.tick(signal, wake);
        } finally {
          end();
        }
      },
    };
  }
}
