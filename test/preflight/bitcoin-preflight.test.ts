// `hashlock preflight` on a Bitcoin-family chain, against a real Litecoin Core regtest node: the network
// told by the genesis block (a registry naming Litecoin's testnet is refused), the tip's time against the
// local clock, and the solver's balance from the node's UTXO set against its minimum.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generatePrivateKey } from 'viem/accounts';
import { hexToBytes } from 'viem';
import { bitcoinPreflight } from '../../src/chains/bitcoin/preflight.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import type { Chain } from '../../src/chains/registry.ts';
import type { PreflightContext } from '../../src/preflight/family-preflight.ts';
import { localnetRegistry } from '../helpers/fixtures.ts';
import { fundAddress, litecoinNodeOrSkip } from '../helpers/litecoin.ts';

test('a Litecoin regtest node: green; a registry naming another network, a stale clock and a solver under its minimum are errors', async (t) => {
  const node = await litecoinNodeOrSkip(t);
  if (!node) return;
  t.after(() => node.stop());
  const chain = localnetRegistry().chain('litecoin_localnet')!;
  const solver = generatePrivateKey();
  const ctx = (overrides: Partial<PreflightContext> = {}): PreflightContext => ({
    chain,
    access: { rpc_url: node.rpcUrl, rpc_cookie_file: node.cookieFile },
    keys: { solver },
    minimums: { inventory: new Map() },
    now: Date.now(),
    ...overrides,
  });
  const row = (rows: Awaited<ReturnType<typeof bitcoinPreflight>>, check: string) => rows.find((r) => r.check === check);

  const green = await bitcoinPreflight(ctx());
  assert.deepEqual(green.filter((r) => r.status === 'error'), []);
  assert.match(row(green, 'chain id')!.detail, /^litecoin_regtest \(genesis 530827f38f93b43e…\)$/);

  const testnet: Chain = { ...chain, network: 'litecoin_testnet' };
  const wrong = await bitcoinPreflight(ctx({ chain: testnet }));
  assert.deepEqual(wrong.map((r) => [r.check, r.status]), [['chain id', 'error']]);
  assert.match(wrong[0]!.detail, /^the node's genesis block 530827f3\w+ is not litecoin_testnet's$/);

  const ahead = await bitcoinPreflight(ctx({ now: Date.now() - 3 * 3_600_000 }));
  assert.equal(row(ahead, 'clock')!.status, 'error');

  const address = walletAddress(hexToBytes(solver), chain.network);
  await fundAddress(node, address, 50_000n);
  await node.mine(1);
  const under = await bitcoinPreflight(ctx({ minimums: { solver: 60_000n, inventory: new Map() } }));
  assert.equal(row(under, 'balance solver')!.detail, '50000 sat, under the minimum 60000');
  const enough = await bitcoinPreflight(ctx({ minimums: { solver: 50_000n, inventory: new Map() } }));
  assert.equal(row(enough, 'balance solver')!.status, 'ok');
});
