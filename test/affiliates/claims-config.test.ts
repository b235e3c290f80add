// The claim wiring in the service config: chains.<key>.fee_claim and HASHLOCK_FEE_SIGNER_KEY.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadServiceConfig } from '../../src/config/service-config.ts';
import { ConfigError } from '../../src/config/schema-check.ts';

const writeConfig = (content: object): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'hashlock-claims-')), 'hashlock.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
};
const FEE_CLAIM = '0x8A791620dd6260079BF849Dc5567aDC3F2FdC318';

test('fee_claim per chain and the fee signer key from the environment', () => {
  const config = loadServiceConfig(writeConfig({ chains: { ethereum_localnet: { fee_claim: FEE_CLAIM } } }), {
    HASHLOCK_FEE_SIGNER_KEY: `0x${'AB'.repeat(32)}`,
  });
  assert.equal(config.chains.ethereum_localnet?.fee_claim, FEE_CLAIM);
  assert.equal(config.keys.feeSigner, `0x${'ab'.repeat(32)}`);
  assert.equal(loadServiceConfig(writeConfig({}), {}).keys.feeSigner, undefined);
});

test('a malformed fee_claim or fee signer key is refused', () => {
  assert.throws(() => loadServiceConfig(writeConfig({ chains: { ethereum_localnet: { fee_claim: '0x1234' } } }), {}), ConfigError);
  assert.throws(() => loadServiceConfig(writeConfig({}), { HASHLOCK_FEE_SIGNER_KEY: 'nope' }), /HASHLOCK_FEE_SIGNER_KEY/);
});
