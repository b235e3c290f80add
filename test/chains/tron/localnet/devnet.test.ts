// The Tron part of `hashlock dev`: the local chain its family registers in src/localnet/families.ts,
// started as `hashlock dev` starts it for tron_localnet, with the USDT and HTLC where the registry names
// them, the dev accounts funded, and what devnet.json and the service get; a restart keeps it all.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { TronWeb } from 'tronweb';
import { Registry } from '../../../../src/chains/registry.ts';
import type { RegistryFile } from '../../../../src/chains/registry-schema.ts';
import { devAccount, privateKeyOf } from '../../../../src/localnet/accounts.ts';
import { localChainOf } from '../../../../src/localnet/families.ts';
import type { DevChain } from '../../../../src/localnet/local-chain.ts';
import { LOCALNET_REGISTRY_PATH } from '../../../helpers/fixtures.ts';
import { tronAddressOf, tronLocalnetChain } from '../../../helpers/tron-localnet.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-tron-dev-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const keys = {
  solver: privateKeyOf(devAccount('solver')),
  relayer: privateKeyOf(devAccount('relayer')),
  user: privateKeyOf(devAccount('user')),
  feeSigner: privateKeyOf(devAccount('feeSigner')),
};

async function start(): Promise<DevChain> {
  const started = await localChainOf('tron')!.start(tronLocalnetChain(), { dataDir, keys, blockTimeMs: 500, wellKnownPorts: false });
  assert.ok(!('unavailable' in started));
  return started;
}

async function balances(url: string, usdt: string) {
  const tw = new TronWeb({ fullHost: url });
  const of = async (role: 'solver' | 'relayer' | 'user') => {
    const who = tronAddressOf(role);
    const answer = await tw.transactionBuilder.triggerConstantContract(usdt, 'balanceOf(address)', {}, [{ type: 'address', value: who }], who);
    return [role, await tw.trx.getBalance(who), BigInt(`0x${answer.constant_result[0]}`)] as const;
  };
  return Promise.all([of('solver'), of('relayer'), of('user')]);
}

test('hashlock dev runs tron_localnet: the registry\'s USDT and HTLC deployed, TRX and USDT funded, blocks coming; a restart resumes', async () => {
  const chain = tronLocalnetChain();
  const registryUsdt = chain.assets[0]!;
  const first = await start();
  let funded: Awaited<ReturnType<typeof balances>>;
  try {
    const url = String(first.record.api_url);
    assert.equal(first.access.rpc_url, url);
    assert.equal(first.access.relayer, tronAddressOf('relayer'));
    assert.deepEqual(first.record, { api_url: url, chain_id: 728126428, evm_chain_id: 5023093724, contracts: { usdt: registryUsdt.token.address, usdtHtlc: registryUsdt.htlc.address } });
    assert.deepEqual(first.accounts, { user: { tron: { address: tronAddressOf('user') } }, solver: { tron: { address: tronAddressOf('solver') } } });
    funded = await balances(url, registryUsdt.token.address);
    assert.deepEqual(funded, [
      ['solver', 100_000_000_000, 10_000_000_000_000n],
      ['relayer', 100_000_000_000, 0n],
      ['user', 10_000_000_000, 1_000_000_000_000n],
    ]);
    const tw = new TronWeb({ fullHost: url });
    const token = await tw.transactionBuilder.triggerConstantContract(registryUsdt.token.address, 'decimals()', {}, [], tronAddressOf('user'));
    assert.equal(BigInt(`0x${token.constant_result[0]}`), 6n);
    const htlcToken = await tw.transactionBuilder.triggerConstantContract(registryUsdt.htlc.address, 'token()', {}, [], tronAddressOf('user'));
    assert.equal(TronWeb.address.fromHex(`41${htlcToken.constant_result[0]!.slice(24)}`), registryUsdt.token.address);
    const head = ((await tw.trx.getCurrentBlock()) as unknown as { block_header: { raw_data: { number: number } } }).block_header.raw_data.number;
    await new Promise((r) => setTimeout(r, 1600));
    const later = ((await tw.trx.getCurrentBlock()) as unknown as { block_header: { raw_data: { number: number } } }).block_header.raw_data.number;
    assert.ok(later >= head + 2, `a block every 500 ms: ${head} then ${later}`);
  } finally {
    await first.stop();
  }

  const second = await start();
  try {
    assert.deepEqual(second.record.contracts, first.record.contracts);
    assert.deepEqual(await balances(String(second.record.api_url), registryUsdt.token.address), funded, 'funded once, not again');
  } finally {
    await second.stop();
  }
});

test('tron_localnet is in the localnet registry beside the other chains, its USDT with 6 decimals', () => {
  const localnet = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as RegistryFile;
  const registry = new Registry(localnet);
  assert.deepEqual(registry.chain('tron_localnet')?.id, 'tron:728126428');
  assert.equal(registry.asset('tron_localnet:usdt')?.decimals, 6);
});
