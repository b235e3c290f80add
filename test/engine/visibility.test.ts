// What an operator sees of the engine and the chains' nodes: /health names a chain whose node has
// been out of reach too long as degraded and stays live; /metrics shows the queue by chain and state,
// the age of its oldest job, the jobs waiting for a node, and the engines' counters.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Registry } from 'prom-client';
import { NodeHealth } from '../../src/chains/node-health.ts';
import { registerEngineMetrics } from '../../src/engine/metrics.ts';
import { openStore } from '../../src/store/database.ts';
import { enqueueJob } from '../../src/store/relayer-jobs.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32 } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

test('a chain is degraded once one of its workers has failed for longer than the threshold, and clears when that worker answers', () => {
  const health = new NodeHealth(1_000);
  const t0 = Date.now();
  health.failed('eth', 'watcher:eth', new Error('fetch failed'));
  health.failed('eth', 'watcher:eth', new Error('fetch failed again'));
  assert.deepEqual(health.degraded(t0 + 500), [], 'not yet past the threshold');
  const [problem] = health.degraded(t0 + 1_500);
  assert.equal(problem?.chain, 'eth');
  assert.equal(problem?.error, 'fetch failed again');
  assert.ok(Date.parse(problem.since) <= t0 + 10, 'counted from the first failure');
  health.answered('eth', 'engine:eth:relayer');
  assert.equal(health.degraded(t0 + 1_500).length, 1, 'another worker answering does not clear it');
  health.answered('eth', 'watcher:eth');
  assert.deepEqual(health.degraded(t0 + 1_500), []);
});

describeEachStore('health and metrics', (kind) => {
  let t: TestApi;
  const health = new NodeHealth(0);
  before(async () => {
    t = await openTestApi(kind, undefined, { nodeHealth: health });
  });
  after(() => t.close());

  test('/health: a chain whose node is out of reach is degraded, and the service stays live (200)', async () => {
    const healthy = await t.api.inject({ method: 'GET', url: '/health' });
    assert.equal(healthy.statusCode, 200);
    assert.equal(healthy.json().result.chains, undefined);
    health.failed('ethereum_localnet', 'watcher:ethereum_localnet', new Error('fetch failed'));
    const degraded = await t.api.inject({ method: 'GET', url: '/health' });
    assert.equal(degraded.statusCode, 200);
    const [chain] = degraded.json().result.chains;
    assert.equal(chain.chain, 'ethereum_localnet');
    assert.equal(chain.status, 'degraded');
    assert.match(chain.error, /fetch failed/);
    health.answered('ethereum_localnet', 'watcher:ethereum_localnet');
    assert.equal((await t.api.inject({ method: 'GET', url: '/health' })).json().result.chains, undefined);
  });

  test("/health and /metrics: a chain whose preflight checks fail is degraded with those checks, until a run passes them", async () => {
    const row = (check: string, status: 'ok' | 'warn' | 'error', detail = '') => ({ scope: 'arbitrum_localnet', check, status, detail });
    health.checked([row('chain id', 'ok', 'evm:31338'), row('balance relayer', 'error', '5 wei, under the minimum 10'), row('clock', 'warn', 'old')]);
    const first = (await t.api.inject({ method: 'GET', url: '/health' })).json().result.chains;
    assert.deepEqual(first.map((c: { chain: string; status: string; error: string; checks: unknown }) => [c.chain, c.status, c.error, c.checks]), [
      ['arbitrum_localnet', 'degraded', 'balance relayer: 5 wei, under the minimum 10', [{ check: 'balance relayer', detail: '5 wei, under the minimum 10' }]],
    ]);
    const metrics = (await t.api.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /hashlock_chain_check_status\{chain="arbitrum_localnet",check="balance relayer"\} 2/);
    assert.match(metrics, /hashlock_chain_check_status\{chain="arbitrum_localnet",check="clock"\} 1/);
    assert.match(metrics, /hashlock_chain_check_status\{chain="arbitrum_localnet",check="chain id"\} 0/);
    health.checked([row('chain id', 'ok'), row('balance relayer', 'error', '6 wei, under the minimum 10')]);
    assert.equal((await t.api.inject({ method: 'GET', url: '/health' })).json().result.chains[0].since, first[0].since, 'a check that keeps failing keeps its first time');
    health.checked([row('chain id', 'ok'), row('balance relayer', 'ok')]);
    assert.equal((await t.api.inject({ method: 'GET', url: '/health' })).json().result.chains, undefined);
  });

  test('/metrics: the queue by chain and state, its oldest job, the jobs waiting for a node, and the counters', async () => {
    await enqueueJob(t.store.db, { chain: 'arbitrum_localnet', action: 'redeem', idempotencyKey: `m:${randomHex32()}`, payload: {} });
    await t.store.db.updateTable('relayer_jobs').set({ deferrals: 2 }).where('chain', '=', 'arbitrum_localnet').execute();
    const text = (await t.api.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /hashlock_engine_jobs\{chain="arbitrum_localnet",status="queued"\} 1/);
    assert.match(text, /hashlock_engine_oldest_pending_seconds\{chain="arbitrum_localnet"\} [0-9.e-]+/);
    assert.match(text, /hashlock_engine_jobs_waiting_for_node\{chain="arbitrum_localnet"\} 1/);
    assert.match(text, /^hashlock_database_up 1$/m);
    for (const name of ['hashlock_engine_refusals_total', 'hashlock_engine_node_errors_total', 'hashlock_engine_bumps_total', 'hashlock_engine_cancellations_total']) {
      assert.match(text, new RegExp(`# TYPE ${name} counter`));
    }
  });
});

test('/metrics with the database out of reach: hashlock_database_up 0, the queue gauges empty, and the scrape still answers', async () => {
  const registry = new Registry();
  const unreachable = await openStore({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none', dataDir: '', poolSize: 1 });
  try {
    registerEngineMetrics(registry, unreachable.db, new NodeHealth());
    const text = await registry.metrics();
    assert.match(text, /^hashlock_database_up 0$/m);
    assert.doesNotMatch(text, /^hashlock_engine_jobs\{/m);
  } finally {
    await unreachable.close();
  }
});
