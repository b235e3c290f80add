// Key-path P2TR wallet transactions against a real Litecoin Core regtest node.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { hex } from '@scure/base';
import { RawTx } from '@scure/btc-signer';
import { BitcoinRpcError } from '../../../src/chains/bitcoin/rpc.ts';
import {
  addressScript,
  buildTx,
  buildWalletTx,
  changePieces,
  dustThreshold,
  signedTx,
  walletAddress,
  walletInput,
  walletPayment,
  type Utxo,
} from '../../../src/chains/bitcoin/wallet-tx.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { satoshis } from '../../../src/chains/bitcoin/chain-data.ts';
import { fundAddress, litecoinNodeOrSkip } from '../../helpers/litecoin.ts';

const NETWORK = 'litecoin_regtest';



async function mempoolEntry(node: LitecoinNode, txid: string): Promise<{ vsize: number; fee: bigint }> {
  const entry = await node.rpc.call<{ vsize: number; fees: { base: number } }>('getmempoolentry', [txid]);
  return { vsize: entry.vsize, fee: satoshis(entry.fees.base) };
}

test('change split into equal pieces of at least the minimum, the remainder on the last', () => {
  assert.deepEqual(changePieces(1_000n, undefined), [1_000n]);
  assert.deepEqual(changePieces(1_000n, { outputs: 3, min: 100n }), [333n, 333n, 334n]);
  // Fewer pieces when the minimum does not allow as many; one piece at least.
  assert.deepEqual(changePieces(1_000n, { outputs: 8, min: 400n }), [500n, 500n]);
  assert.deepEqual(changePieces(300n, { outputs: 8, min: 400n }), [300n]);
  const key = schnorr.utils.randomSecretKey();
  const own = walletAddress(key, NETWORK);
  const utxos: Utxo[] = [{ txid: 'ab'.repeat(32), vout: 0, value: 10_000_000n }, { txid: 'cd'.repeat(32), vout: 1, value: 50_000_000n }];
  const to = { address: walletAddress(schnorr.utils.randomSecretKey(), NETWORK), amount: 1_000_000n };
  const tx = buildWalletTx({ privateKey: key, network: NETWORK, utxos, inOrder: true, to, feeRate: 2n, changeAddress: own, splitChange: { outputs: 4, min: 1_000_000n } });
  assert.deepEqual(tx.spent, [{ txid: 'ab'.repeat(32), vout: 0 }], 'the first UTXO given, not the largest');
  assert.equal(tx.changes.length, 4);
  assert.deepEqual(tx.changes.map((c) => c.vout), [1, 2, 3, 4]);
  assert.equal(tx.changes.reduce((sum, c) => sum + c.value, 0n), 10_000_000n - 1_000_000n - tx.fee);
  assert.ok(tx.fee >= 2n * BigInt(tx.vsize));
  assert.deepEqual(tx.change, tx.changes[0]);
});

test('dust thresholds follow each node family: Litecoin Core ten times Bitcoin Core', () => {
  const key = schnorr.utils.randomSecretKey();
  const p2tr = walletPayment(key, NETWORK).script;
  const p2wpkh = hex.decode(`0014${'11'.repeat(20)}`);
  const p2pkh = hex.decode(`76a914${'11'.repeat(20)}88ac`);
  const p2sh = hex.decode(`a914${'11'.repeat(20)}87`);
  assert.deepEqual(
    [p2tr, p2wpkh, p2pkh, p2sh].map((s) => dustThreshold(s, 'bitcoin')),
    [330n, 294n, 546n, 540n],
  );
  assert.deepEqual(
    [p2tr, p2wpkh, p2pkh, p2sh].map((s) => dustThreshold(s, NETWORK)),
    [3300n, 2940n, 5460n, 5400n],
  );
  assert.throws(() => dustThreshold(p2tr, 'dogecoin'), /unknown bitcoin-family network/);
});

test('wallet transactions on a Litecoin regtest node', async (t) => {
  const node = await litecoinNodeOrSkip(t);
  if (!node) return;
  try {
    const nodeAddress = () => node.rpc.call<string>('getnewaddress', ['', 'bech32']);

    await t.test('the node refuses a P2TR output one sat under dustThreshold and takes one at it', async () => {
      const key = schnorr.utils.randomSecretKey();
      const utxo = await fundAddress(node, walletAddress(key, NETWORK), 100_000n);
      const p2tr = walletPayment(schnorr.utils.randomSecretKey(), NETWORK).script;
      const limit = dustThreshold(p2tr, NETWORK);
      const back = addressScript(walletAddress(key, NETWORK), NETWORK);
      const pay = (amount: bigint) =>
        signedTx(
          buildTx(
            [walletInput(utxo, key, NETWORK)],
            [
              { script: p2tr, amount },
              { script: back, amount: 100_000n - amount - 1_000n },
            ],
          ),
        );
      const under = pay(limit - 1n);
      await assert.rejects(node.rpc.sendRawTransaction(under.hex), (err: unknown) => err instanceof BitcoinRpcError && /dust/.test(err.message));
      const at = pay(limit);
      assert.equal(await node.rpc.sendRawTransaction(at.hex), at.txid);
    });

    await t.test('pays exactly the target, selects largest first, returns the change and pays rate × vsize', async () => {
      const key = schnorr.utils.randomSecretKey();
      const own = walletAddress(key, NETWORK);
      const utxos = [await fundAddress(node, own, 200_000n), await fundAddress(node, own, 500_000n), await fundAddress(node, own, 300_000n)];
      await node.mine(1);
      const to = await nodeAddress();
      const feeRate = 4n;
      const tx = buildWalletTx({ privateKey: key, network: NETWORK, utxos, to: { address: to, amount: 600_000n }, feeRate, changeAddress: own });
      assert.deepEqual(tx.spent, [utxos[1], utxos[2]].map((u) => ({ txid: u!.txid, vout: u!.vout })));
      assert.deepEqual(tx.change, { txid: tx.txid, vout: 1, value: 800_000n - 600_000n - tx.fee });
      const decoded = RawTx.decode(hex.decode(tx.hex));
      assert.equal(decoded.outputs[0]?.amount, 600_000n);
      assert.deepEqual(decoded.outputs[1]?.script, walletPayment(key, NETWORK).script);

      assert.equal(await node.rpc.sendRawTransaction(tx.hex), tx.txid);
      const entry = await mempoolEntry(node, tx.txid);
      assert.equal(entry.vsize, tx.vsize);
      assert.equal(entry.fee, tx.fee);
      assert.equal(entry.fee, feeRate * BigInt(entry.vsize));
      await node.mine(1);
      assert.equal(satoshis(await node.rpc.call<number>('getreceivedbyaddress', [to, 1])), 600_000n);
      const change = await node.rpc.call<{ value: number; confirmations: number } | null>('gettxout', [tx.txid, 1]);
      assert.ok(change);
      assert.equal(satoshis(change.value), tx.change?.value);
      assert.equal(change.confirmations, 1);

      // The change and the unused UTXO are spendable by the same key.
      const next = buildWalletTx({
        privateKey: key,
        network: NETWORK,
        utxos: [utxos[0]!, tx.change],
        to: { address: to, amount: 250_000n },
        feeRate: 2n,
        changeAddress: own,
      });
      assert.equal(next.spent.length, 2);
      assert.equal(await node.rpc.sendRawTransaction(next.hex), next.txid);
    });

    await t.test('change under the dust limit is left to the fee', async () => {
      const key = schnorr.utils.randomSecretKey();
      const own = walletAddress(key, NETWORK);
      const utxo = await fundAddress(node, own, 100_000n);
      await node.mine(1);
      const to = await nodeAddress();
      // 2,000 sats over the amount: enough for the fee, not for a non-dust (3,300 sats) P2TR change.
      const tx = buildWalletTx({ privateKey: key, network: NETWORK, utxos: [utxo], to: { address: to, amount: 98_000n }, feeRate: 2n, changeAddress: own });
      assert.equal(tx.change, undefined);
      assert.equal(tx.fee, 2_000n);
      assert.equal(RawTx.decode(hex.decode(tx.hex)).outputs.length, 1);
      assert.equal(await node.rpc.sendRawTransaction(tx.hex), tx.txid);
      const entry = await mempoolEntry(node, tx.txid);
      assert.equal(entry.fee, 2_000n);
      assert.ok(entry.fee >= 2n * BigInt(entry.vsize));
    });

    await t.test('refuses what it cannot pay or send', async () => {
      const key = schnorr.utils.randomSecretKey();
      const own = walletAddress(key, NETWORK);
      const utxos: Utxo[] = [{ txid: '11'.repeat(32), vout: 0, value: 50_000n }];
      const to = await nodeAddress();
      const base = { privateKey: key, network: NETWORK, utxos, feeRate: 2n, changeAddress: own };
      assert.throws(() => buildWalletTx({ ...base, to: { address: to, amount: 49_990n } }), /cannot pay 49990 plus the fee/);
      assert.throws(() => buildWalletTx({ ...base, to: { address: to, amount: 2_000n } }), /at least the dust limit 2940/);
      assert.throws(() => buildWalletTx({ ...base, to: { address: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080', amount: 10_000n } }), /not a litecoin_regtest address/);
      assert.throws(() => buildWalletTx({ ...base, utxos: [...utxos, ...utxos], to: { address: to, amount: 10_000n } }), /listed twice/);
      assert.throws(() => buildWalletTx({ ...base, feeRate: 0n, to: { address: to, amount: 10_000n } }), /fee rate/);
      assert.throws(() => buildWalletTx({ ...base, privateKey: new Uint8Array(32), to: { address: to, amount: 10_000n } }), /wallet private key/);
    });
  } finally {
    await node.stop();
  }
});
