// `hashlock solver` at start, with no service to reach: a mistake in its configuration fails at once,
// before any call to the service, rather than being retried as an outage; a valid one waits for the
// service until stopped.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { generatePrivateKey } from 'viem/accounts';
import { ConfigError } from '../../src/config/schema-check.ts';
import { loadServiceConfig, type StrategyConfig } from '../../src/config/service-config.ts';
import { freePort } from '../../src/localnet/free-port.ts';
import type { ParentLog } from '../../src/log.ts';
import { startSolverProcess } from '../../src/solver-process/solver-process.ts';
import { envFor, runHashlock } from '../helpers/hashlock-cli.ts';
import { LOCALNET_REGISTRY_PATH } from '../helpers/fixtures.ts';

const key = generatePrivateKey();
const EVM = ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc'];
/** Tron takes no address proofs: the solver has no address there to quote from. */
const ON_TRON: StrategyConfig = { solver: 'maker', from: 'ethereum_localnet:wbtc', to: 'tron_localnet:usdt', fee_bips: 5 };

let dir: string;
/** A loopback port nothing listens on: every call to the service is refused. */
let unreachable: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hashlock-solver-start-'));
  unreachable = `http://127.0.0.1:${await freePort()}`;
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A solver config file on the three chains (their nodes out of reach too: start reads none of them before the service). */
function configFile(name: string, strategies: StrategyConfig[]): string {
  const path = join(dir, `${name}.json`);
  const chains = Object.fromEntries(['ethereum_localnet', 'arbitrum_localnet', 'tron_localnet'].map((c) => [c, { rpc_url: unreachable }]));
  writeFileSync(path, JSON.stringify({ registry: LOCALNET_REGISTRY_PATH, data_dir: join(dir, name), log_level: 'silent', chains, strategies }));
  return path;
}
const configOf = (path: string) => loadServiceConfig(path, { HASHLOCK_SOLVER_KEY: key });

/** Whether `promise` settles within `ms`: its value or error, else 'pending'. */
const within = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), sleep(ms, 'pending' as const)]);

test('a configuration mistake rejects at once, the service out of reach', async () => {
  const cases = [
    { config: configOf(configFile('on-tron', [{ solver: 'maker', from: EVM, to: EVM, fee_bips: 5 }, ON_TRON])), serviceUrl: unreachable, error: /strategies\[1\]\.to: solver .* has no address on tron_localnet/ },
    { config: configOf(configFile('valid', [{ solver: 'maker', from: EVM, to: EVM, fee_bips: 5 }])), serviceUrl: '127.0.0.1:4426', error: /--service: 127\.0\.0\.1:4426 is not an http\(s\) URL/ },
  ];
  for (const c of cases) {
    const controller = new AbortController();
    try {
      const outcome = await within(startSolverProcess(c.config, { serviceUrl: c.serviceUrl, solverApiKey: 'unused', signal: controller.signal }), 2_000);
      assert.ok(outcome !== 'pending' && 'error' in outcome, `rejects within 2 s: ${String(c.error)}`);
      assert.ok(outcome.error instanceof ConfigError, String(outcome.error));
      assert.match(outcome.error.message, c.error);
    } finally {
      controller.abort();
    }
  }
});

test('hashlock solver exits with the configuration error, the service out of reach', async () => {
  const env = { ...envFor(join(dir, 'cli')), HASHLOCK_SOLVER_KEY: key, HASHLOCK_SOLVER_API_KEY: 'unused' };
  // Long enough for the command to load; retried as an outage, it would run to this timeout and be killed.
  const { code, stderr } = await runHashlock(['solver', '-c', configFile('cli', [ON_TRON]), '--service', unreachable], env, 30_000);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /configuration error: config: strategies\[0\]\.to: solver .* has no address on tron_localnet/);
  assert.doesNotMatch(stderr, /not reachable/);
});

test('a valid configuration waits for the service out of reach, trying again, until stopped', async () => {
  const warnings: string[] = [];
  const log: ParentLog = { info: () => undefined, warn: (_fields, message) => void warnings.push(message), error: () => undefined, child: () => log };
  const controller = new AbortController();
  const starting = startSolverProcess(configOf(configFile('waiting', [{ solver: 'maker', from: EVM, to: EVM, fee_bips: 5 }])), {
    serviceUrl: unreachable,
    solverApiKey: 'unused',
    signal: controller.signal,
    log,
  });
  assert.equal(await within(starting, 2_500), 'pending', 'still waiting after 2.5 s');
  assert.deepEqual(warnings, ['the service is not reachable; trying again every second']);
  controller.abort();
  const outcome = await within(starting, 1_000);
  assert.ok(outcome !== 'pending' && 'error' in outcome, 'stops waiting once aborted');
  assert.equal((outcome.error as Error).name, 'AbortError');
});
