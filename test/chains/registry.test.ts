import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadRegistry, Registry } from '../../src/chains/registry.ts';
import type { RegistryFile } from '../../src/chains/registry-schema.ts';
import { ConfigError } from '../../src/config/schema-check.ts';
import { LOCALNET_REGISTRY_PATH, MAINNET_REGISTRY_PATH } from '../helpers/fixtures.ts';

type Mutable = any;
const base = (): Mutable => JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8'));

const cases: Array<[string, (r: Mutable) => void, RegExp]> = [
  ['decimals as a string', (r) => (r.chains[0].assets[0].decimals = '8'), /^registry: chains\[0\]\.assets\[0\]\.decimals: must be integer$/],
  ['negative decimals', (r) => (r.chains[1].assets[2].decimals = -1), /chains\[1\]\.assets\[2\]\.decimals: must be >= 0/],
  ['an unknown field', (r) => (r.chains[0].colour = 'blue'), /^registry: chains\[0\]\.colour: is not a known field$/],
  ['a missing field', (r) => delete r.chains[2].source_timelock, /^registry: chains\[2\]\.source_timelock: is required$/],
  ['no chains', (r) => (r.chains = []), /^registry: chains: must NOT have fewer than 1 items$/],
  ['an unknown network', (r) => (r.network = 'devnet'), /network: must be/],
  ['a chain id without number', (r) => (r.chains[0].id = 'evm:'), /chains\[0\]\.id: must match pattern/],
  ['a chain id of an unknown family', (r) => (r.chains[0].id = 'cosmos:1'), /chains\[0\]\.id: must match pattern/],
  ['a chain key with capitals', (r) => (r.chains[0].chain = 'Ethereum'), /chains\[0\]\.chain: must match pattern/],
  ['an amount with decimals', (r) => (r.chains[0].assets[1].min_amount = '1.5'), /chains\[0\]\.assets\[1\]\.min_amount: must match pattern/],
  ['an amount as a number', (r) => (r.chains[0].assets[1].max_amount = 100), /chains\[0\]\.assets\[1\]\.max_amount: must be string/],
  ['an unknown htlc schema', (r) => (r.chains[0].assets[0].htlc.schema = 'evm:htlc_v9'), /chains\[0\]\.assets\[0\]\.htlc\.schema: must be/],
  ['an unknown listing', (r) => (r.chains[0].assets[0].listed_in = ['v4']), /chains\[0\]\.assets\[0\]\.listed_in\[0\]: must be/],
  ['a schema of another family', (r) => (r.chains[2].assets[0].htlc.schema = 'evm:htlc'), /^registry: chains\[2\]\.assets\[0\]\.htlc\.schema: evm:htlc does not belong to the bitcoin family of litecoin_localnet$/],
  ['min above max', (r) => (r.chains[0].assets[0].min_amount = '2000000000'), /chains\[0\]\.assets\[0\]\.min_amount: is greater than max_amount/],
  ['an active asset without HTLC address', (r) => (r.chains[1].assets[0].htlc.address = ''), /chains\[1\]\.assets\[0\]\.htlc\.address: an active asset needs its HTLC address/],
  ['an active token without token address', (r) => (r.chains[1].assets[1].token.address = ''), /chains\[1\]\.assets\[1\]\.token\.address: an active token asset needs its token address/],
  ['a bad EIP-55 checksum', (r) => (r.chains[0].assets[0].token.address = '0x5fbDB2315678afecb367f032d93F642f64180aa3'), /chains\[0\]\.assets\[0\]\.token\.address: 0x5fbD.* is not a valid EVM address/],
  ['a non-hex EVM address', (r) => (r.chains[0].assets[0].htlc.address = '0xZZ'), /chains\[0\]\.assets\[0\]\.htlc\.address: .*not a valid EVM address/],
  ['a duplicate chain key', (r) => (r.chains[1].chain = 'ethereum_localnet'), /duplicate chain key ethereum_localnet/],
  ['a duplicate chain id', (r) => (r.chains[1].id = 'evm:31337'), /duplicate chain id evm:31337/],
  ['a duplicate asset', (r) => r.chains[0].assets.push(r.chains[0].assets[0]), /duplicate asset ethereum_localnet:wbtc/],
  ['a destination timelock over half a source one', (r) => (r.chains[2].destination_timelock = 40), /litecoin_localnet\.destination_timelock \(400 s\) is more than half of ethereum_localnet\.source_timelock \(600 s\)/],
];

for (const [name, mutate, message] of cases) {
  test(`registry with ${name} is refused with a message naming the field`, () => {
    const file = base();
    mutate(file);
    const dir = mkdtempSync(join(tmpdir(), 'hashlock-registry-'));
    const path = join(dir, 'registry.json');
    writeFileSync(path, JSON.stringify(file));
    assert.throws(
      () => loadRegistry(path),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, String(err));
        assert.match(err.message.replace(path, 'registry'), message);
        return true;
      },
    );
  });
}

test('an inactive chain is exempt from the timelock rule', () => {
  const file = base();
  file.chains[2].destination_timelock = 40;
  file.chains[2].is_active = false;
  assert.equal(new Registry(file as RegistryFile).chains.length, 5);
});

test('a file that is not JSON is refused with its path', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'hashlock-registry-')), 'broken.json');
  writeFileSync(path, '{"network": ');
  assert.throws(() => loadRegistry(path), /broken\.json: cannot read registry/);
});

test('the shipped registries load, and lookups by asset id ignore case', () => {
  const localnet = loadRegistry(LOCALNET_REGISTRY_PATH);
  assert.equal(localnet.network, 'localnet');
  assert.equal(localnet.asset('ETHEREUM_LOCALNET:WBTC')?.decimals, 8);
  assert.equal(localnet.chain('arbitrum_localnet')?.id, 'evm:31338');
  const mainnet = loadRegistry(MAINNET_REGISTRY_PATH);
  assert.equal(mainnet.network, 'mainnet');
  assert.equal(mainnet.chains.length, 20);
  assert.equal(mainnet.assets.length, 34);
  assert.equal(mainnet.asset('bitcoin:btc')?.chain.id, 'bitcoin:0');
  assert.equal(mainnet.asset('ethereum:wbtc')?.token.address, '0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599');
  for (const chain of mainnet.chains) assert.equal(chain.isActive, chain.assets.some((a) => a.isActive), chain.key);
});
