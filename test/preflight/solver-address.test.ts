// Preflight's check that the config's solver names the solver key's party on each chain: the service
// runs its solver for the entry whose address somewhere is the key's, so a wrong address on another
// chain would otherwise show up only as swaps there that never fill.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ServiceConfig } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { solverKeyRows } from '../../src/preflight/preflight.ts';
import { localnetRegistry } from '../helpers/fixtures.ts';

test("a solver address that is not the solver key's, on a chain where the key's solver names one, is an error; another solver's is not checked", () => {
  const registry = localnetRegistry();
  const key = privateKeyOf(devAccount('solver'));
  const own = devAccount('solver').address;
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  const config = {
    keys: { solver: key },
    solvers: [
      { id: 'own', name: 'own', addresses: { ethereum_localnet: own, arbitrum_localnet: stranger } },
      { id: 'maker', name: 'maker', addresses: { ethereum_localnet: stranger } },
    ],
  } as unknown as ServiceConfig;
  const eth = solverKeyRows(config, registry, registry.chain('ethereum_localnet')!);
  assert.deepEqual(
    eth.map((r) => [r.check, r.status]),
    [['solver address own', 'ok']],
  );
  const arb = solverKeyRows(config, registry, registry.chain('arbitrum_localnet')!);
  assert.deepEqual(
    arb.map((r) => [r.check, r.status, r.detail]),
    [['solver address own', 'error', `solvers[0].addresses.arbitrum_localnet is ${stranger}, the solver key's party there is ${own}`]],
  );
  assert.deepEqual(solverKeyRows({ ...config, keys: {} }, registry, registry.chain('arbitrum_localnet')!), [], 'no solver key: nothing to compare');
});
