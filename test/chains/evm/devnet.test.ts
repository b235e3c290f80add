import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { getAddress, getContractAddress } from 'viem';
import { deployPlan, evmDevnet } from '../../../src/localnet/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import { localnetRegistry } from '../../helpers/fixtures.ts';

const deployer = devAccount('deployer').address;
const at = (nonce: number) => getContractAddress({ from: deployer, nonce: BigInt(nonce) });

test("the deploy plan reproduces Garden's localnet addresses: FeeClaim takes the first nonce left", () => {
  const registry = localnetRegistry();
  const addresses = (key: string) => {
    const chain = registry.chain(key)!;
    const of = (symbol: string, part: 'htlc' | 'token') => getAddress(chain.assets.find((a) => a.symbol === symbol)![part].address);
    return { wbtc: of('wbtc', 'token'), usdc: of('usdc', 'token'), wbtcHtlc: of('wbtc', 'htlc'), usdcHtlc: of('usdc', 'htlc'), nativeHtlc: of('eth', 'htlc') };
  };
  // @gardenfi/orderbook 3.1.3's localnet assets: WBTC and its HTLC at the deployer's nonces 0 and 2 on
  // ethereum_localnet, 1 and 6 on arbitrum_localnet.
  assert.deepEqual(deployPlan(deployer, addresses('ethereum_localnet')), { wbtc: 0, usdc: 1, wbtcHtlc: 2, usdcHtlc: 3, nativeHtlc: 4, feeClaim: 5 });
  assert.deepEqual(deployPlan(deployer, addresses('arbitrum_localnet')), { usdc: 0, wbtc: 1, usdcHtlc: 2, nativeHtlc: 3, feeClaim: 4, wbtcHtlc: 6 });
  assert.equal(addresses('arbitrum_localnet').wbtc, getAddress('0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512'));
  assert.equal(addresses('arbitrum_localnet').wbtcHtlc, getAddress('0x0165878A594ca255338adfa4d48449f69242Eb8F'));

  const valid = { wbtc: at(0), usdc: at(1), wbtcHtlc: at(2), usdcHtlc: at(3), nativeHtlc: at(4) };
  assert.throws(() => deployPlan(deployer, { ...valid, usdc: at(40) }), /usdc at 0x[0-9a-fA-F]{40}: not an address the deployer .* creates within its first 32/);
  assert.throws(() => deployPlan(deployer, { ...valid, usdc: at(0) }), /usdc and wbtc both sit at/);
});

test('hashlock dev takes the well-known port when free; when it is taken, a free one and a note saying so', async (t) => {
  // Hold 8545 (unless something else already does): the chain must start elsewhere and say why.
  const holder: Server | undefined = await new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(8545, '127.0.0.1', () => resolve(server));
  });
  t.after(() => holder?.close());
  const chain = localnetRegistry().chain('ethereum_localnet')!;
  const keys = { solver: privateKeyOf(devAccount('solver')), relayer: privateKeyOf(devAccount('relayer')), user: privateKeyOf(devAccount('user')), feeSigner: privateKeyOf(devAccount('feeSigner')) };
  const started = await evmDevnet.start(chain, { dataDir: mkdtempSync(join(tmpdir(), 'hashlock-devnet-')), keys, blockTimeMs: 0, wellKnownPorts: true });
  assert.ok(!('unavailable' in started));
  t.after(() => started.stop());
  assert.notEqual(new URL(String(started.access.rpc_url)).port, '8545');
  assert.deepEqual(started.notes, [`port 8545 is taken, so ethereum_localnet listens on ${new URL(String(started.access.rpc_url)).port}: Garden's SDK, whose localnet expects 8545, cannot reach it`]);
});
