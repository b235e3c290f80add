import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { loadRegistry } from '../../src/chains/registry.ts';
import { ConfigError } from '../../src/config/schema-check.ts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../../src/config/service-config.ts';
import { startService } from '../../src/service.ts';
import { checkSolvers } from '../../src/solver/solver-config.ts';
import { LOCALNET_REGISTRY_PATH } from '../helpers/fixtures.ts';

function writeConfig(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'hashlock-config-')), 'hashlock.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

test('the dev config loads with defaults and the environment overrides it', () => {
  const defaults = loadServiceConfig(DEV_CONFIG_PATH, {});
  assert.equal(defaults.port, 4426);
  assert.equal(defaults.registryPath, LOCALNET_REGISTRY_PATH);
  assert.equal(defaults.databaseUrl, undefined);
  assert.equal(defaults.dataDir, resolve('.data'));
  const env = loadServiceConfig(DEV_CONFIG_PATH, {
    PORT: '5000',
    HASHLOCK_DATA_DIR: '/tmp/x',
    DATABASE_URL: 'postgres://u@h/db',
    LOG_LEVEL: 'warn',
  });
  assert.deepEqual([env.port, env.dataDir, env.databaseUrl, env.logLevel], [5000, '/tmp/x', 'postgres://u@h/db', 'warn']);
});

test('rate limits: defaults, partial settings, false for none, and trust_proxy', () => {
  const defaults = loadServiceConfig(DEV_CONFIG_PATH, {});
  assert.deepEqual(defaults.rateLimits, { perKey: { max: 3000, windowMs: 10_000 }, perAddress: { max: 300, windowMs: 10_000 } });
  assert.equal(defaults.trustProxy, false);
  const partial = loadServiceConfig(writeConfig({ rate_limit: { per_address: { max: 5, window_ms: 2000 } }, trust_proxy: '10.0.0.0/8' }), {});
  assert.deepEqual(partial.rateLimits, { perKey: { max: 3000, windowMs: 10_000 }, perAddress: { max: 5, windowMs: 2000 } });
  assert.equal(partial.trustProxy, '10.0.0.0/8');
  assert.equal(loadServiceConfig(writeConfig({ rate_limit: false }), {}).rateLimits, undefined);
});

test('webhooks: private addresses refused and the delivery log kept 30 days by default, else as given', () => {
  const defaults = loadServiceConfig(writeConfig({}), {});
  assert.deepEqual([defaults.webhooksAllowPrivateAddresses, defaults.webhooksKeepDeliveriesDays], [false, 30]);
  const given = loadServiceConfig(writeConfig({ webhooks: { allow_private_addresses: true, keep_deliveries_days: 7 } }), {});
  assert.deepEqual([given.webhooksAllowPrivateAddresses, given.webhooksKeepDeliveriesDays], [true, 7]);
});

test('the PostgreSQL pool: 20 connections by default, else as given', () => {
  assert.equal(loadServiceConfig(writeConfig({}), {}).databasePoolSize, 20);
  assert.equal(loadServiceConfig(writeConfig({ database_pool_size: 4 }), {}).databasePoolSize, 4);
});

test('event streams: 10,000 open and 50 public per client address by default, else as given', () => {
  assert.deepEqual(loadServiceConfig(writeConfig({}), {}).eventStreams, { maxStreams: 10_000, maxPublicStreamsPerAddress: 50 });
  const given = loadServiceConfig(writeConfig({ event_streams: { max_open: 500, max_public_per_address: 0 } }), {});
  assert.deepEqual(given.eventStreams, { maxStreams: 500, maxPublicStreamsPerAddress: 0 });
});

test("solver_rule2_margin_seconds: rule 2's margin, 300 s by default, else as given", () => {
  assert.equal(loadServiceConfig(writeConfig({}), {}).solverRule2MarginSeconds, 300);
  assert.equal(loadServiceConfig(DEV_CONFIG_PATH, {}).solverRule2MarginSeconds, 300);
  assert.equal(loadServiceConfig(writeConfig({ solver_rule2_margin_seconds: 20 }), {}).solverRule2MarginSeconds, 20);
});

const bad: Array<[string, unknown, Record<string, string>, RegExp]> = [
  ['a rule-2 margin under 10 s', { solver_rule2_margin_seconds: 5 }, {}, /hashlock\.json: solver_rule2_margin_seconds: must be >= 10/],
  ['a fractional rule-2 margin', { solver_rule2_margin_seconds: 30.5 }, {}, /solver_rule2_margin_seconds: must be integer/],
  ['a rule-2 margin as a string', { solver_rule2_margin_seconds: '300' }, {}, /solver_rule2_margin_seconds: must be integer/],
  ['no room for any event stream', { event_streams: { max_open: 0 } }, {}, /event_streams\.max_open: must be >= 1/],
  ['a fractional public stream cap', { event_streams: { max_public_per_address: 2.5 } }, {}, /event_streams\.max_public_per_address: must be integer/],
  ['an unknown event stream setting', { event_streams: { heartbeat: 5 } }, {}, /event_streams\.heartbeat: is not a known field/],
  ['a string port', { port: '80' }, {}, /hashlock\.json: port: must be integer/],
  ['a port out of range', { port: 70000 }, {}, /port: must be <= 65535/],
  ['a non-numeric PORT', {}, { PORT: 'eighty' }, /PORT: eighty is not a TCP port number/],
  ['an unknown field', { prot: 1 }, {}, /prot: is not a known field/],
  ['a bad database URL', { database_url: 'mysql://x' }, {}, /database_url: must match pattern/],
  ['a database pool of no connection', { database_pool_size: 0 }, {}, /database_pool_size: must be >= 1/],
  ['a fractional database pool', { database_pool_size: 2.5 }, {}, /database_pool_size: must be integer/],
  ['a negative price', { prices: { bitcoin: -1 } }, {}, /prices\.bitcoin: must be >= 0/],
  ['a solver without name', { solvers: [{ id: 's', addresses: {} }] }, {}, /solvers\[0\]\.name: is required/],
  ['a bad log level', { log_level: 'loud' }, {}, /log_level: must be/],
  ['a fee cap that is not a decimal of gwei', { chains: { ethereum_localnet: { max_fee_gwei: '12 gwei' } } }, {}, /chains\.ethereum_localnet\.max_fee_gwei: must match pattern/],
  ['a fee bump after zero seconds', { chains: { ethereum_localnet: { fee_bump: { after_seconds: 0 } } } }, {}, /chains\.ethereum_localnet\.fee_bump\.after_seconds: must be >= 1/],
  ['a fractional fee rate ceiling', { chains: { litecoin_localnet: { fee_bump: { max_fee_rate: 1.5 } } } }, {}, /chains\.litecoin_localnet\.fee_bump\.max_fee_rate: must be integer/],
  ['replace-by-fee as a string', { chains: { litecoin_localnet: { fee_bump: { replace_by_fee: 'yes' } } } }, {}, /chains\.litecoin_localnet\.fee_bump\.replace_by_fee: must be boolean/],
  ['an unknown fee bump setting', { chains: { ethereum_localnet: { fee_bump: { every: 3 } } } }, {}, /chains\.ethereum_localnet\.fee_bump\.every: is not a known field/],
  ['a watcher poll faster than 100 ms', { chains: { ethereum_localnet: { poll_ms: 10 } } }, {}, /chains\.ethereum_localnet\.poll_ms: must be >= 100/],
  ['a rate limit of zero', { rate_limit: { per_key: { max: 0, window_ms: 1000 } } }, {}, /rate_limit\.per_key\.max: must be >= 1/],
  ['a rate limit window in seconds', { rate_limit: { per_address: { max: 10, window: 60 } } }, {}, /rate_limit\.per_address/],
  ['rate limits turned on by true', { rate_limit: true }, {}, /rate_limit/],
  ['an HTTP URL as the WebSocket endpoint', { chains: { ethereum_localnet: { ws_url: 'http://127.0.0.1:8545' } } }, {}, /chains\.ethereum_localnet\.ws_url: must match pattern/],
  ['an unknown route policy default', { route_policy: { default: 'allow' } }, {}, /hashlock\.json: route_policy\.default: must be one of open, closed/],
  ['an unknown route policy list', { route_policy: { blacklist: ['a:b -> c:d'] } }, {}, /route_policy\.blacklist: is not a known field/],
  ['route policy rules that are not a list', { route_policy: { isolation_groups: 'a:b <-> c:d' } }, {}, /route_policy\.isolation_groups: must be array/],
  ['an empty route policy rule', { route_policy: { whitelist_overrides: [''] } }, {}, /route_policy\.whitelist_overrides\[0\]/],
  ['a route policy rule without direction', { route_policy: { blacklist_pairs: ['bitcoin:BTC starknet:*'] } }, {}, /hashlock\.json: route_policy\.blacklist_pairs\[0\]: rule "bitcoin:BTC starknet:\*" has no direction/],
  ['a route policy rule with an unknown direction', { route_policy: { isolation_groups: ['ethereum:SEED <=> arbitrum:SEED'] } }, {}, /route_policy\.isolation_groups\[0\]: rule "ethereum:SEED <=> arbitrum:SEED" has an unknown direction "<=>"/],
  ['a delivery log kept zero days', { webhooks: { keep_deliveries_days: 0 } }, {}, /webhooks\.keep_deliveries_days: must be >= 1/],
  ['a delivery log kept a fraction of a day', { webhooks: { keep_deliveries_days: 0.5 } }, {}, /webhooks\.keep_deliveries_days: must be integer/],
  ['a malformed route policy side', { route_policy: { blacklist_pairs: ['x:y -> bitcoin'] } }, {}, /route_policy\.blacklist_pairs\[0\]: rule "x:y -> bitcoin": destination side "bitcoin" must be chain:SYMBOL/],
];

for (const [name, content, env, message] of bad) {
  test(`a service config with ${name} is refused naming the field`, () => {
    assert.throws(() => loadServiceConfig(writeConfig(content), env), (err: unknown) => err instanceof ConfigError && message.test(err.message));
  });
}

test('route_policy: open with no rules by default, else as given', () => {
  assert.deepEqual(loadServiceConfig(DEV_CONFIG_PATH, {}).routePolicy, { default: 'open', isolation_groups: [], blacklist_pairs: [], whitelist_overrides: [] });
  const given = loadServiceConfig(writeConfig({ route_policy: { default: 'closed', whitelist_overrides: ['bitcoin:BTC -> ethereum:WBTC'] } }), {});
  assert.deepEqual(given.routePolicy, { default: 'closed', isolation_groups: [], blacklist_pairs: [], whitelist_overrides: ['bitcoin:BTC -> ethereum:WBTC'] });
});

test('the service refuses to start on a route policy rule naming a chain the registry lacks', async () => {
  const dev = JSON.parse(readFileSync(DEV_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
  const path = writeConfig({ ...dev, registry: LOCALNET_REGISTRY_PATH, route_policy: { blacklist_pairs: ['ethereum_localnet:wbtc -> starknet:*'] } });
  await assert.rejects(
    startService(loadServiceConfig(path, {})),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message === 'config: route_policy.blacklist_pairs[0]: rule "ethereum_localnet:wbtc -> starknet:*" names chain starknet, which is not in the registry',
  );
});

test('solver addresses must name registry chains and be valid on EVM chains', () => {
  const registry = loadRegistry(LOCALNET_REGISTRY_PATH);
  const solver = { id: 's1', name: 'one', addresses: { ethereum_localnet: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } };
  checkSolvers([solver], registry, 'config');
  assert.throws(() => checkSolvers([{ ...solver, addresses: { solana: 'x' } }], registry, 'config'), /config: solvers\[0\]\.addresses\.solana: no chain solana in the registry/);
  assert.throws(() => checkSolvers([{ ...solver, addresses: { ethereum_localnet: '0x1234' } }], registry, 'config'), /solvers\[0\]\.addresses\.ethereum_localnet: 0x1234 is not a valid EVM address/);
  assert.throws(() => checkSolvers([solver, solver], registry, 'config'), /solvers\[1\]\.id: duplicate solver id s1/);
});

test("fee_bump: a chain's bump settings are read as given", () => {
  const config = loadServiceConfig(writeConfig({ chains: { litecoin_localnet: { fee_bump: { after_blocks: 4, rounds: 1, max_fee_rate: 50, replace_by_fee: true } }, ethereum_localnet: { fee_bump: { after_seconds: 90 } } } }), {});
  assert.deepEqual(config.chains.litecoin_localnet?.fee_bump, { after_blocks: 4, rounds: 1, max_fee_rate: 50, replace_by_fee: true });
  assert.deepEqual(config.chains.ethereum_localnet?.fee_bump, { after_seconds: 90 });
});
