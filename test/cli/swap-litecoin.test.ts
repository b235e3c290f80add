// The client side of Litecoin swaps (`hashlock swap`, the benches) funding HTLCs concurrently on a real
// regtest node: fundings from one wallet never pick the same output, and the node's one-at-a-time
// UTXO-set scan does not fail clients that scan at once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { fundHtlc, LITECOIN_NETWORK, type LitecoinWallet } from '../../src/chains/bitcoin/swap-wallet.ts';
import { SwapError } from '../../src/chains/swap-wallet.ts';
import type { LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';
import { litecoinNodeOrSkip, toCoins } from '../helpers/litecoin.ts';

const AMOUNT = 1_000_000n;

let node: LitecoinNode | undefined;
after(async () => {
  await node?.stop();
});

interface RawTx {
  vin: Array<{ txid: string; vout: number }>;
  vout: Array<{ value: number; scriptPubKey: { address?: string; addresses?: string[] } }>;
}

test('concurrent fundings: one wallet spends each output once, other wallets scan at the same time', async (t) => {
  node = await litecoinNodeOrSkip(t);
  if (!node) return;
  const rpc = node.rpc;
  const wallet = (): LitecoinWallet => {
    const privateKey = randomBytes(32);
    return { chainKey: 'litecoin_localnet', address: walletAddress(privateKey, LITECOIN_NETWORK), privateKey, rpcUrl: node!.rpcUrl, rpc };
  };
  const busy = wallet();
  const others = Array.from({ length: 6 }, wallet);
  for (let i = 0; i < 3; i++) await rpc.call('sendtoaddress', [busy.address, toCoins(AMOUNT * 2n)]);
  await rpc.call('sendmany', ['', Object.fromEntries(others.map((w) => [w.address, toCoins(AMOUNT * 2n)]))]);
  await node.mine(1);

  const htlc = () => wallet().address; // any address stands for an HTLC here
  const targets = Array.from({ length: 4 }, htlc);
  const results = await Promise.allSettled([...targets.map((to) => fundHtlc(busy, to, AMOUNT)), ...others.map((w) => fundHtlc(w, htlc(), AMOUNT))]);
  const [mine, theirs] = [results.slice(0, 4), results.slice(4)];
  assert.ok(theirs.every((r) => r.status === 'fulfilled'), JSON.stringify(theirs.find((r) => r.status === 'rejected')));
  // Three confirmed outputs, four fundings: three go out, the fourth finds nothing confirmed left to spend.
  assert.equal(mine.filter((r) => r.status === 'fulfilled').length, 3);
  const refused = mine.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.ok(refused?.reason instanceof SwapError && /no confirmed coins/.test(refused.reason.message), String(refused?.reason));

  const spent = new Set<string>();
  for (const r of mine) {
    if (r.status !== 'fulfilled') continue;
    const tx = await rpc.call<RawTx>('getrawtransaction', [r.value.txid, true]);
    for (const input of tx.vin) {
      assert.ok(!spent.has(`${input.txid}:${input.vout}`), 'an output spent twice');
      spent.add(`${input.txid}:${input.vout}`);
    }
  }
  const mempool = await rpc.call<string[]>('getrawmempool');
  assert.equal(mempool.length, 3 + others.length);
});
