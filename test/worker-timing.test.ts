// Each worker's passes are timed on the running service, so /metrics shows which stage of settlement
// holds swaps up.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ServiceConfig } from '../src/config/service-config.ts';
import { startService } from '../src/service.ts';
import type { Worker } from '../src/lease-loop.ts';
import { WorkerTiming } from '../src/worker-timing.ts';
import { chainlessServiceConfig } from './helpers/service-config.ts';
import { describeEachStore } from './helpers/stores.ts';

test('a timed pass is counted under its worker, a failed one too', async () => {
  const timing = new WorkerTiming();
  const ok = timing.timed<Pick<Worker, 'lease' | 'tick'>>({ lease: 'watcher:a', tick: () => new Promise<void>((r) => setTimeout(r, 20)) });
  const failing = timing.timed<Pick<Worker, 'lease' | 'tick'>>({ lease: 'engine:b:solver', tick: () => Promise.reject(new Error('node down')) });
  await ok.tick(AbortSignal.timeout(1_000), () => undefined);
  await assert.rejects(failing.tick(AbortSignal.timeout(1_000), () => undefined), /node down/);
  const values = (await timing.passes.get()).values;
  const count = (worker: string) => values.find((v) => v.metricName === 'hashlock_worker_pass_seconds_count' && v.labels.worker === worker)?.value;
  const sum = values.find((v) => v.metricName === 'hashlock_worker_pass_seconds_sum' && v.labels.worker === 'watcher:a')?.value ?? 0;
  assert.equal(count('watcher:a'), 1, 'one pass of watcher:a');
  assert.equal(count('engine:b:solver'), 1, 'the failed pass is counted');
  assert.ok(sum >= 0.015 && sum < 1, `the pass took about 20 ms, measured ${sum} s`);
});

describeEachStore('worker pass timing on the running service', (kind) => {
  let config: ServiceConfig;
  let drop: () => Promise<void>;
  before(async () => {
    ({ config, drop } = await chainlessServiceConfig(kind));
  });
  after(() => drop());

  test('/metrics shows the passes of the service\'s own workers', async () => {
    const service = await startService(config);
    try {
      let text = '';
      for (const until = Date.now() + 10_000; !/^hashlock_worker_pass_seconds_count\{worker="order-events"\} [1-9]/m.test(text); ) {
        assert.ok(Date.now() < until, `no pass of the order-events worker in /metrics:\n${text.slice(0, 2000)}`);
        await new Promise((r) => setTimeout(r, 200));
        text = await (await fetch(`${service.url}/metrics`)).text();
      }
    } finally {
      await service.stop();
    }
  });
});
