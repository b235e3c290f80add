// The HTLC spend builders against a real Litecoin Core regtest node: what the node accepts is the proof.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { randomBytes } from '@noble/hashes/utils.js';
import { hex } from '@scure/base';
import { RawTx } from '@scure/btc-signer';
import { htlcAddress, htlcPayment, type HtlcScriptTerms } from '../../../src/chains/bitcoin/htlc.ts';
import {
  addInstantRefundFee,
  assembleInstantRefundTx,
  buildRedeemTx,
  buildRefundTx,
  instantRefundSighashes,
  signInstantRefundSighashes,
  verifyInstantRefundSignature,
  type HtlcSpendBase,
} from '../../../src/chains/bitcoin/htlc-spend.ts';
import { BitcoinRpcError } from '../../../src/chains/bitcoin/rpc.ts';
import { walletAddress, type Utxo } from '../../../src/chains/bitcoin/wallet-tx.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { satoshis } from '../../../src/chains/bitcoin/chain-data.ts';
import { fundAddress, litecoinNodeOrSkip } from '../../helpers/litecoin.ts';

const NETWORK = 'litecoin_regtest';
const TIMELOCK = 6n;

interface Party {
  key: Uint8Array;
  xOnly: string;
}

function party(): Party {
  const key = schnorr.utils.randomSecretKey();
  return { key, xOnly: hex.encode(schnorr.getPublicKey(key)) };
}

function newHtlc() {
  const initiator = party();
  const redeemer = party();
  const secret = randomBytes(32);
  const terms: HtlcScriptTerms = {
    initiator: initiator.xOnly,
    redeemer: redeemer.xOnly,
    secretHash: hex.encode(sha256(secret)),
    timelock: TIMELOCK,
  };
  return { initiator, redeemer, secret, terms, address: htlcAddress(terms, NETWORK) };
}



/** The node's answer to a rejected transaction, e.g. "non-BIP68-final (code 64)". */
async function rejection(node: LitecoinNode, txHex: string): Promise<string> {
  try {
    await node.rpc.sendRawTransaction(txHex);
  } catch (err) {
    assert.ok(err instanceof BitcoinRpcError, String(err));
    assert.equal(err.code, -26, err.message);
    return err.message;
  }
  return assert.fail('the node accepted the transaction');
}

/** The transaction with input `idx`'s witness replaced. */
function rewitness(txHex: string, idx: number, change: (witness: Uint8Array[]) => Uint8Array[]): string {
  const raw = RawTx.decode(hex.decode(txHex));
  const witnesses = raw.witnesses ?? [];
  witnesses[idx] = change(witnesses[idx] ?? []);
  return hex.encode(RawTx.encode({ ...raw, witnesses }));
}

async function received(node: LitecoinNode, address: string): Promise<bigint> {
  return satoshis(await node.rpc.call<number>('getreceivedbyaddress', [address, 1]));
}

async function isUnspent(node: LitecoinNode, utxo: Utxo): Promise<boolean> {
  return (await node.rpc.call<unknown>('gettxout', [utxo.txid, utxo.vout, true])) !== null;
}

async function mempoolEntry(node: LitecoinNode, txid: string): Promise<{ vsize: number; fee: bigint }> {
  const entry = await node.rpc.call<{ vsize: number; fees: { base: number } }>('getmempoolentry', [txid]);
  return { vsize: entry.vsize, fee: satoshis(entry.fees.base) };
}

test('HTLC spends on a Litecoin regtest node', async (t) => {
  const node = await litecoinNodeOrSkip(t);
  if (!node) return;
  try {
    const payoutAddress = () => node.rpc.call<string>('getnewaddress', ['', 'bech32']);

    await t.test('redeem with the right secret is accepted and pays the HTLC value minus rate × vsize', async () => {
      const h = newHtlc();
      const utxo = await fundAddress(node, h.address, 1_000_000n);
      await node.mine(1);
      const to = await payoutAddress();
      const feeRate = await node.rpc.feeRate();
      const tx = buildRedeemTx({ terms: h.terms, network: NETWORK, utxos: [utxo], feeRate, to, secret: h.secret, redeemerKey: h.redeemer.key });
      assert.equal(await node.rpc.sendRawTransaction(tx.hex), tx.txid);
      const entry = await mempoolEntry(node, tx.txid);
      assert.equal(entry.vsize, tx.vsize);
      assert.equal(entry.fee, feeRate * BigInt(entry.vsize));
      assert.equal(tx.fee, entry.fee);
      await node.mine(1);
      assert.equal(await received(node, to), 1_000_000n - entry.fee);
      assert.equal(await isUnspent(node, utxo), false);
      // The secret is in the witness for the initiator's side to read.
      const witness = RawTx.decode(hex.decode(tx.hex)).witnesses?.[0] ?? [];
      assert.equal(witness.length, 4);
      assert.deepEqual(witness[1], h.secret);
    });

    await t.test('a wrong or 31-byte secret is refused by the builder, and a wrong-secret witness by the node', async () => {
      const h = newHtlc();
      const utxo = await fundAddress(node, h.address, 500_000n);
      await node.mine(1);
      const to = await payoutAddress();
      const base = { terms: h.terms, network: NETWORK, utxos: [utxo], feeRate: 2n, to, redeemerKey: h.redeemer.key };
      assert.throws(() => buildRedeemTx({ ...base, secret: randomBytes(32) }), /sha256\(secret\) does not match the HTLC secretHash/);
      assert.throws(() => buildRedeemTx({ ...base, secret: h.secret.subarray(0, 31) }), /exactly 32 bytes, got 31/);
      assert.throws(() => buildRedeemTx({ ...base, secret: Uint8Array.of(...h.secret, 0) }), /exactly 32 bytes, got 33/);
      assert.throws(() => buildRedeemTx({ ...base, secret: h.secret, redeemerKey: h.initiator.key }), /redeemer private key does not match/);

      const good = buildRedeemTx({ ...base, secret: h.secret });
      // The signature does not commit to the witness, so only the secret is wrong here.
      const wrongSecret = rewitness(good.hex, 0, ([sig, , leaf, cb]) => [sig!, randomBytes(32), leaf!, cb!]);
      assert.match(await rejection(node, wrongSecret), /EQUALVERIFY/);
      const shortSecret = rewitness(good.hex, 0, ([sig, secret, leaf, cb]) => [sig!, secret!.subarray(0, 31), leaf!, cb!]);
      assert.match(await rejection(node, shortSecret), /EQUALVERIFY/);
      // A redeemer signature over another transaction's sighash fails too.
      const otherSig = buildRedeemTx({ ...base, feeRate: 3n, secret: h.secret });
      const mixed = rewitness(good.hex, 0, (w) => [RawTx.decode(hex.decode(otherSig.hex)).witnesses![0]![0]!, ...w.slice(1)]);
      assert.match(await rejection(node, mixed), /script-verify-flag|Invalid Schnorr signature/i);
      assert.equal(await node.rpc.sendRawTransaction(good.hex), good.txid);
    });

    await t.test('refund is non-BIP68-final before the CSV timelock and accepted once it has passed', async () => {
      const h = newHtlc();
      const utxo = await fundAddress(node, h.address, 800_000n);
      await node.mine(1);
      const fundedAt = await node.rpc.getBlockCount();
      const to = await payoutAddress();
      const tx = buildRefundTx({ terms: h.terms, network: NETWORK, utxos: [utxo], feeRate: 3n, to, initiatorKey: h.initiator.key });
      const decoded = RawTx.decode(hex.decode(tx.hex));
      assert.equal(decoded.version, 2);
      assert.equal(decoded.inputs[0]?.sequence, Number(TIMELOCK));
      assert.throws(
        () => buildRefundTx({ terms: h.terms, network: NETWORK, utxos: [utxo], feeRate: 3n, to, initiatorKey: h.redeemer.key }),
        /initiator private key does not match/,
      );

      assert.match(await rejection(node, tx.hex), /non-BIP68-final/);
      // The mempool checks against the next block: the UTXO is TIMELOCK deep there when the tip is
      // fundedAt + TIMELOCK - 1.
      await node.mine(Number(TIMELOCK) - 2);
      assert.equal(await node.rpc.getBlockCount(), fundedAt + Number(TIMELOCK) - 2);
      assert.match(await rejection(node, tx.hex), /non-BIP68-final/);
      await node.mine(1);
      assert.equal(await node.rpc.sendRawTransaction(tx.hex), tx.txid);
      const entry = await mempoolEntry(node, tx.txid);
      assert.equal(entry.fee, 3n * BigInt(entry.vsize));
      await node.mine(1);
      assert.equal(await received(node, to), 800_000n - entry.fee);
    });

    await t.test('an HTLC funded by two UTXOs is redeemed in one transaction, and another refunded in one', async () => {
      const r = newHtlc();
      const rUtxos = [await fundAddress(node, r.address, 300_000n), await fundAddress(node, r.address, 450_000n)];
      const f = newHtlc();
      const fUtxos = [await fundAddress(node, f.address, 200_000n), await fundAddress(node, f.address, 250_000n)];
      await node.mine(1);

      const redeemTo = await payoutAddress();
      const redeem = buildRedeemTx({ terms: r.terms, network: NETWORK, utxos: rUtxos, feeRate: 2n, to: redeemTo, secret: r.secret, redeemerKey: r.redeemer.key });
      assert.equal(RawTx.decode(hex.decode(redeem.hex)).inputs.length, 2);
      assert.equal(await node.rpc.sendRawTransaction(redeem.hex), redeem.txid);

      const refundTo = await payoutAddress();
      const refund = buildRefundTx({ terms: f.terms, network: NETWORK, utxos: fUtxos, feeRate: 2n, to: refundTo, initiatorKey: f.initiator.key });
      assert.deepEqual(
        RawTx.decode(hex.decode(refund.hex)).inputs.map((i) => i.sequence),
        [Number(TIMELOCK), Number(TIMELOCK)],
      );
      assert.match(await rejection(node, refund.hex), /non-BIP68-final/);
      await node.mine(Number(TIMELOCK) - 1);
      assert.equal(await node.rpc.sendRawTransaction(refund.hex), refund.txid);
      await node.mine(1);

      assert.equal(await received(node, redeemTo), 750_000n - redeem.fee);
      assert.equal(redeem.fee, 2n * BigInt(redeem.vsize));
      assert.equal(await received(node, refundTo), 450_000n - refund.fee);
      for (const u of [...rUtxos, ...fUtxos]) assert.equal(await isUnspent(node, u), false);
    });

    await t.test('instant refund needs both SACP signatures in the right order', async () => {
      const h = newHtlc();
      const utxos = [await fundAddress(node, h.address, 600_000n), await fundAddress(node, h.address, 400_000n)];
      await node.mine(1);
      const to = await payoutAddress();
      const base: HtlcSpendBase = { terms: h.terms, network: NETWORK, utxos, to };
      const hashes = instantRefundSighashes(base);
      assert.equal(hashes.length, 2);
      assert.notEqual(hashes[0], hashes[1]);
      const client = signInstantRefundSighashes(hashes, h.initiator.key);
      const solver = signInstantRefundSighashes(hashes, h.redeemer.key);

      // The API's check on client signatures.
      assert.equal(verifyInstantRefundSignature(hashes[0]!, client[0]!, h.terms.initiator), true);
      assert.equal(verifyInstantRefundSignature(hashes[1]!, client[1]!, h.terms.initiator), true);
      assert.equal(verifyInstantRefundSignature(hashes[0]!, client[1]!, h.terms.initiator), false, 'signature of another input');
      assert.equal(verifyInstantRefundSignature(hashes[0]!, client[0]!, h.terms.redeemer), false, 'another key');
      assert.equal(verifyInstantRefundSignature(hashes[0]!, client[0]!.slice(0, 128), h.terms.initiator), false, 'no hash type byte');
      assert.equal(verifyInstantRefundSignature(hashes[0]!, `${client[0]!.slice(0, 128)}01`, h.terms.initiator), false, 'SIGHASH_ALL byte');
      assert.equal(verifyInstantRefundSignature(hashes[0]!, 'zz', h.terms.initiator), false, 'not hex');
      assert.equal(verifyInstantRefundSignature(hashes[0]!.slice(2), client[0]!, h.terms.initiator), false, 'short hash');
      // Each signature commits to its output: another payout address means other hashes.
      const elsewhere = instantRefundSighashes({ ...base, to: await payoutAddress() });
      assert.notEqual(elsewhere[0], hashes[0]);
      assert.deepEqual(instantRefundSighashes(base), hashes);
      assert.throws(
        () => assembleInstantRefundTx({ ...base, initiatorSignatures: [client[1]!, client[0]!], redeemerSignatures: solver }),
        /initiator signature 0 is invalid/,
      );
      assert.throws(() => assembleInstantRefundTx({ ...base, initiatorSignatures: client, redeemerSignatures: [solver[0]!] }), /2 redeemer signatures needed, got 1/);
      assert.throws(() => assembleInstantRefundTx({ ...base, initiatorSignatures: client, redeemerSignatures: client }), /redeemer signature 0 is invalid/);

      const tx = assembleInstantRefundTx({ ...base, initiatorSignatures: client, redeemerSignatures: solver });
      const decoded = RawTx.decode(hex.decode(tx.hex));
      assert.equal(decoded.version, 2);
      assert.equal(decoded.lockTime, 0);
      assert.deepEqual(
        decoded.inputs.map((i) => i.sequence),
        [0xffffffff, 0xffffffff],
      );
      assert.deepEqual(
        decoded.outputs.map((o) => o.amount),
        [600_000n, 400_000n],
      );
      assert.equal(tx.fee, 0n);
      const leaf = htlcPayment(h.terms, NETWORK).spends.instantRefund;
      assert.deepEqual(decoded.witnesses?.[1], [hex.decode(solver[1]!), hex.decode(client[1]!), leaf.script, leaf.controlBlock]);

      // A zero-fee transaction is below the relay fee; the node waives it for a prioritised txid (the
      // witness variants below share the txid), so what it rejects next is the scripts.
      assert.match(await rejection(node, tx.hex), /min relay fee not met/);
      await node.rpc.call('prioritisetransaction', [tx.txid, 0, 10_000]);
      const onlyClient = rewitness(tx.hex, 0, ([, initiatorSig, s, cb]) => [new Uint8Array(0), initiatorSig!, s!, cb!]);
      assert.match(await rejection(node, onlyClient), /script-verify-flag/);
      const onlySolver = rewitness(tx.hex, 0, ([redeemerSig, , s, cb]) => [redeemerSig!, new Uint8Array(0), s!, cb!]);
      assert.match(await rejection(node, onlySolver), /script-verify-flag/);
      const swapped = rewitness(tx.hex, 0, ([a, b, s, cb]) => [b!, a!, s!, cb!]);
      assert.match(await rejection(node, swapped), /script-verify-flag/);

      assert.equal(await node.rpc.sendRawTransaction(tx.hex), tx.txid);
      await node.mine(1);
      assert.equal(await received(node, to), 1_000_000n);
    });

    await t.test('instant refund with an appended fee input and change pays the rate and the owner the full value', async () => {
      const h = newHtlc();
      const utxos = [await fundAddress(node, h.address, 700_000n), await fundAddress(node, h.address, 300_000n)];
      const feeKey = schnorr.utils.randomSecretKey();
      const feeUtxo = await fundAddress(node, walletAddress(feeKey, NETWORK), 100_000n);
      await node.mine(1);
      const to = await payoutAddress();
      const changeAddress = walletAddress(feeKey, NETWORK);
      const base: HtlcSpendBase = { terms: h.terms, network: NETWORK, utxos, to };
      const hashes = instantRefundSighashes(base);
      const sacp = assembleInstantRefundTx({
        ...base,
        initiatorSignatures: signInstantRefundSighashes(hashes, h.initiator.key),
        redeemerSignatures: signInstantRefundSighashes(hashes, h.redeemer.key),
      });
      assert.match(await rejection(node, sacp.hex), /min relay fee not met/);

      const feeRate = 5n;
      assert.throws(
        () => addInstantRefundFee({ ...base, tx: sacp.hex, feeUtxo: { ...feeUtxo, value: 1_000n }, feeKey, feeRate, changeAddress }),
        /cannot pay the fee/,
      );
      const other = newHtlc();
      assert.throws(
        () => addInstantRefundFee({ ...base, terms: other.terms, tx: sacp.hex, feeUtxo, feeKey, feeRate, changeAddress }),
        /input 0 is not a signed instant-refund spend of this HTLC/,
      );
      assert.throws(
        () => addInstantRefundFee({ ...base, utxos: [utxos[1]!, utxos[0]!], tx: sacp.hex, feeUtxo, feeKey, feeRate, changeAddress }),
        /not the instant refund of these HTLC UTXOs/,
      );
      assert.throws(
        () => addInstantRefundFee({ ...base, tx: sacp.hex, feeUtxo: utxos[0]!, feeKey, feeRate, changeAddress }),
        /listed twice/,
      );
      const tampered = rewitness(sacp.hex, 1, ([a, b, s, cb]) => [b!, a!, s!, cb!]);
      assert.throws(
        () => addInstantRefundFee({ ...base, tx: tampered, feeUtxo, feeKey, feeRate, changeAddress }),
        /initiator signature 1 is invalid/,
      );
      const paid = addInstantRefundFee({ ...base, tx: sacp.hex, feeUtxo, feeKey, feeRate, changeAddress });
      const decoded = RawTx.decode(hex.decode(paid.hex));
      assert.equal(decoded.inputs.length, 3);
      assert.equal(decoded.outputs.length, 3);
      assert.deepEqual(decoded.witnesses?.slice(0, 2), RawTx.decode(hex.decode(sacp.hex)).witnesses, 'the SACP witnesses are reused as signed');
      assert.ok(paid.change);
      assert.deepEqual(paid.change, { txid: paid.txid, vout: 2, value: 100_000n - paid.fee });

      assert.equal(await node.rpc.sendRawTransaction(paid.hex), paid.txid);
      const entry = await mempoolEntry(node, paid.txid);
      assert.equal(entry.vsize, paid.vsize);
      assert.equal(entry.fee, feeRate * BigInt(entry.vsize));
      await node.mine(1);
      assert.equal(await received(node, to), 1_000_000n);
      const change = await node.rpc.call<{ value: number; scriptPubKey: { hex: string } } | null>('gettxout', [paid.txid, 2]);
      assert.ok(change);
      assert.equal(satoshis(change.value), 100_000n - entry.fee);
      for (const u of [...utxos, feeUtxo]) assert.equal(await isUnspent(node, u), false);
    });

    await t.test('instant refund fee input: a change that would be dust goes to the fee', async () => {
      const h = newHtlc();
      const utxos = [await fundAddress(node, h.address, 400_000n)];
      const feeKey = schnorr.utils.randomSecretKey();
      // A P2TR change output would add 43 vB: at 15 sat/vB about 2,100 sats would be left for it,
      // under Litecoin's 3,300 sats P2TR dust limit (though far above Bitcoin's 330).
      const feeUtxo = await fundAddress(node, walletAddress(feeKey, NETWORK), 6_000n);
      await node.mine(1);
      const to = await payoutAddress();
      const base: HtlcSpendBase = { terms: h.terms, network: NETWORK, utxos, to };
      const hashes = instantRefundSighashes(base);
      const sacp = assembleInstantRefundTx({
        ...base,
        initiatorSignatures: signInstantRefundSighashes(hashes, h.initiator.key),
        redeemerSignatures: signInstantRefundSighashes(hashes, h.redeemer.key),
      });
      const paid = addInstantRefundFee({ ...base, tx: sacp.hex, feeUtxo, feeKey, feeRate: 15n, changeAddress: walletAddress(feeKey, NETWORK) });
      assert.equal(paid.change, undefined);
      assert.equal(paid.fee, 6_000n);
      assert.equal(RawTx.decode(hex.decode(paid.hex)).outputs.length, 1);
      assert.ok(paid.fee >= 15n * BigInt(paid.vsize));
      const wouldBeChange = 6_000n - 15n * BigInt(paid.vsize + 43);
      assert.ok(wouldBeChange > 330n && wouldBeChange < 3_300n, `change ${wouldBeChange}`);
      assert.equal(await node.rpc.sendRawTransaction(paid.hex), paid.txid);
      await node.mine(1);
      assert.equal(await received(node, to), 400_000n);
    });
  } finally {
    await node.stop();
  }
});
