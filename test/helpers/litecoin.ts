// Tests that need a real Litecoin Core regtest node. In CI (CI=true) a missing `litecoind` fails the
// test; elsewhere the test skips with a loud message.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { satoshis } from '../../src/chains/bitcoin/chain-data.ts';
import { scanUtxoSet } from '../../src/chains/bitcoin/utxo-scan.ts';
import type { Utxo } from '../../src/chains/bitcoin/wallet-tx.ts';
import { findLitecoind, startLitecoind, type LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';

/** A fresh regtest node for a test file, or undefined (the test is skipped) when none can run here. */
export async function litecoinNodeOrSkip(t: TestContext, extraArgs: readonly string[] = []): Promise<LitecoinNode | undefined> {
  if (!findLitecoind()) {
    if (process.env.CI) throw new Error('litecoind is not on the PATH: .ci/run installs it (apt-get install litecoind)');
    console.warn('\n!!! SKIPPED: litecoind is not on the PATH; install it (apt-get install litecoind) to run the Bitcoin-family node tests\n');
    t.skip('litecoind is not installed');
    return undefined;
  }
  return startLitecoind({ extraArgs });
}

/** A regtest node for a whole suite (started in `before`), or undefined outside CI without litecoind. */
export async function litecoinNodeForSuite(): Promise<LitecoinNode | undefined> {
  if (!findLitecoind()) {
    if (process.env.CI) throw new Error('litecoind is not on the PATH: .ci/run installs it (apt-get install litecoind)');
    console.warn('\n!!! SKIPPED: litecoind is not on the PATH; install it (apt-get install litecoind) to run the Bitcoin-family swap tests\n');
    return undefined;
  }
  return startLitecoind();
}

/** An amount of satoshis as the exact decimal string of coins the node's RPC takes. */
export const toCoins = (sats: bigint): string => `${sats / 100_000_000n}.${(sats % 100_000_000n).toString().padStart(8, '0')}`;

/** Pays `value` from the node's wallet to `address` (unconfirmed); returns the new output. */
export async function fundAddress(node: LitecoinNode, address: string, value: bigint): Promise<Utxo> {
  const txid = await node.rpc.call<string>('sendtoaddress', [address, toCoins(value)]);
  const tx = await node.rpc.call<{ vout: Array<{ n: number; value: number; scriptPubKey: { addresses?: string[]; address?: string } }> }>(
    'getrawtransaction',
    [txid, true],
  );
  const out = tx.vout.find((o) => o.scriptPubKey.address === address || o.scriptPubKey.addresses?.includes(address));
  assert.ok(out, 'funding output not found');
  assert.equal(satoshis(out.value), value);
  return { txid, vout: out.n, value };
}

/** Polls the watcher until it has read every block and the mempool. */
export async function syncWatcher(watcher: { poll(): Promise<{ to: bigint; head: bigint }> }): Promise<void> {
  for (;;) {
    const read = await watcher.poll();
    if (read.to >= read.head) return;
  }
}

/** The confirmed balance of any address, read from the node's UTXO set (asked again while another client's scan runs). */
export async function confirmedBalance(node: LitecoinNode, address: string): Promise<bigint> {
  return (await scanUtxoSet(node.rpc, [address])).reduce((sum, o) => sum + o.value, 0n);
}

/**
 * For tests that run swaps on `hashlock dev`'s Litecoin chain: false (the test is skipped loudly) when
 * litecoind is not installed, naming `what` they would have run; in CI that fails.
 */
export function litecoindOrSkip(t: TestContext, what: string): boolean {
  if (findLitecoind()) return true;
  if (process.env.CI) throw new Error('litecoind is not on the PATH: .ci/run installs it (apt-get install litecoind)');
  console.warn(`\n!!! SKIPPED: litecoind is not on the PATH; install it (apt-get install litecoind) to run ${what}\n`);
  t.skip('litecoind is not installed');
  return false;
}
