// config/registry.testnet.json (the public testnets) and config/hashlock.testnet.example.json: the registry
// loads as `hashlock deploy` reads it, every value has its source in docs/registry-sources.md's testnet
// section, and the example config loads and quotes every pair of the registry's assets.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { getAddress, isAddress } from 'viem';
import { loadRegistry } from '../../src/chains/registry.ts';
import { checkSchema, ConfigError } from '../../src/config/schema-check.ts';
import { loadServiceConfig, PACKAGE_ROOT, ServiceConfigSchema } from '../../src/config/service-config.ts';
import { deploymentPath } from '../../src/deploy/deployment-file.ts';
import { buildStrategies } from '../../src/pricing/strategies.ts';

const REGISTRY = resolve(PACKAGE_ROOT, 'config/registry.testnet.json');
const EXAMPLE = resolve(PACKAGE_ROOT, 'config/hashlock.testnet.example.json');
const SOURCES = resolve(PACKAGE_ROOT, 'docs/registry-sources.md');

/** The testnet part of docs/registry-sources.md: from its testnet title to the next top-level title. */
function testnetSection(): string {
  const text = readFileSync(SOURCES, 'utf8');
  const start = text.search(/^# Testnet registry/m);
  assert.ok(start >= 0, 'docs/registry-sources.md has no "# Testnet registry" section');
  const rest = text.slice(start + 1);
  const end = rest.search(/^# /m);
  return end < 0 ? rest : rest.slice(0, end);
}

test('the testnet registry loads undeployed, with the public testnets, active assets and no HTLC address yet', () => {
  const registry = loadRegistry(REGISTRY, { undeployed: true });
  assert.equal(registry.network, 'testnet');
  assert.deepEqual(
    registry.chains.map((c) => [c.key, c.id, c.network]),
    [
      ['ethereum_sepolia', 'evm:11155111', ''],
      ['arbitrum_sepolia', 'evm:421614', ''],
      ['base_sepolia', 'evm:84532', ''],
      ['bitcoin_testnet', 'bitcoin:1', 'bitcoin_testnet'],
      ['litecoin_testnet', 'bitcoin:2', 'litecoin_testnet'],
      ['solana_testnet', 'solana:1', 'devnet'],
      ['tron_nile', 'tron:3448148188', 'nile'],
    ],
  );
  for (const asset of registry.assets) {
    assert.equal(asset.isActive, true, `${asset.id} is active: the operator deploys before serving`);
    assert.equal(asset.htlc.address, '', `${asset.id}: HTLC addresses come from the deployment file`);
  }
  // Served as it is (no deployment file yet), an active asset without its HTLC is refused.
  if (!existsSync(deploymentPath(REGISTRY))) {
    assert.throws(() => loadRegistry(REGISTRY), (err: unknown) => err instanceof ConfigError && /hashlock deploy/.test(err.message));
  }
});

test("the testnet registry's EVM token addresses carry their EIP-55 checksum, with the decimals of their tokens", () => {
  const registry = loadRegistry(REGISTRY, { undeployed: true });
  const evmTokens = registry.assets.filter((a) => a.chain.family === 'evm' && a.token.schema === 'evm:erc20');
  assert.equal(evmTokens.length, 3);
  for (const asset of evmTokens) {
    assert.ok(isAddress(asset.token.address, { strict: true }), `${asset.id}: ${asset.token.address}`);
    assert.equal(getAddress(asset.token.address), asset.token.address, `${asset.id}: not in its checksummed form`);
  }
  const decimals = Object.fromEntries(registry.assets.map((a) => [a.id, a.decimals]));
  assert.deepEqual(decimals, {
    'ethereum_sepolia:eth': 18,
    'ethereum_sepolia:usdc': 6,
    'arbitrum_sepolia:eth': 18,
    'arbitrum_sepolia:usdc': 6,
    'base_sepolia:eth': 18,
    'base_sepolia:usdc': 6,
    'bitcoin_testnet:btc': 8,
    'litecoin_testnet:ltc': 8,
    'solana_testnet:sol': 9,
    'solana_testnet:usdc': 6,
    'tron_nile:usdt': 6,
  });
});

test("every testnet chain, chain id, asset and token address has its source in docs/registry-sources.md's testnet section", () => {
  const registry = loadRegistry(REGISTRY, { undeployed: true });
  const section = testnetSection();
  for (const chain of registry.chains) {
    assert.ok(section.includes(`| ${chain.key} |`), `no row for chain ${chain.key}`);
    assert.ok(section.includes(chain.id), `no source for ${chain.key}'s id ${chain.id}`);
  }
  for (const asset of registry.assets) {
    assert.ok(section.includes(`| ${asset.id} |`), `no row for asset ${asset.id}`);
    if (asset.token.address) assert.ok(section.includes(asset.token.address), `no source for ${asset.id}'s token ${asset.token.address}`);
  }
});

test('the testnet example config loads, reaches every chain and quotes every pair of the registry', () => {
  // The key files it names are the operator's to create (hashlock keys new), so the schema checks them
  // here and the rest loads without them (the registry named as the example names it).
  const raw = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown> & { key_files?: Record<string, string> };
  checkSchema(ServiceConfigSchema, raw, EXAMPLE);
  assert.deepEqual(Object.keys(raw.key_files ?? {}).sort(), ['deployer', 'fee_signer', 'relayer', 'secret', 'solver']);
  const { key_files: _keyFiles, ...withoutKeys } = raw;
  const copy = join(mkdtempSync(join(tmpdir(), 'hashlock-testnet-')), 'hashlock.json');
  writeFileSync(copy, JSON.stringify(withoutKeys));
  const config = loadServiceConfig(copy, { HASHLOCK_REGISTRY: resolve(dirname(EXAMPLE), raw.registry as string) });
  assert.equal(config.registryPath, REGISTRY);
  assert.match(config.databaseUrl ?? '', /^postgres:\/\//);
  assert.ok(config.priceFeed, 'prices come from the feed');
  assert.deepEqual(config.prices, {});
  const registry = loadRegistry(config.registryPath, { undeployed: true });
  for (const chain of registry.chains) assert.ok(config.chains[chain.key]?.rpc_url, `no rpc_url for ${chain.key}`);
  for (const key of Object.keys(config.chains)) assert.ok(registry.chain(key), `chains.${key} is not a registry chain`);
  for (const solver of config.solvers) {
    assert.deepEqual(Object.keys(solver.addresses).sort(), registry.chains.map((c) => c.key).sort(), `${solver.id} has an address entry on every chain`);
  }
  const strategies = buildStrategies(config.strategies, config.solvers, registry);
  const quoted = new Set(strategies.map((s) => `${s.from.id}>${s.to.id}`));
  for (const from of registry.assets) {
    for (const to of registry.assets) if (from !== to) assert.ok(quoted.has(`${from.id}>${to.id}`), `no strategy quotes ${from.id} -> ${to.id}`);
  }
});
