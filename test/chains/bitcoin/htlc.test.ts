import assert from 'node:assert/strict';
import { test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bech32m, hex } from '@scure/base';
import { RawTx, taprootNumsKey } from '@scure/btc-signer';
import { HTLC_INTERNAL_KEY_HEX, htlcAddress, htlcLeaves, htlcPayment, type HtlcScriptTerms } from '../../../src/chains/bitcoin/htlc.ts';

const { Point, utils } = schnorr;
const toBigInt = (bytes: Uint8Array) => BigInt(`0x${hex.encode(bytes)}`);

const HRP: Record<string, string> = {
  bitcoin: 'bc',
  bitcoin_testnet: 'tb',
  bitcoin_regtest: 'bcrt',
  litecoin: 'ltc',
  litecoin_testnet: 'tltc',
  litecoin_regtest: 'rltc',
};

// The key set of garden-rs's HTLC tests (as kept in TARS-Finance/Tars-rs,
// crates/bitcoin/src/htlc/htlc.rs, test_get_control_block).
const TERMS: HtlcScriptTerms = {
  initiator: 'c803373989fdde1177323bb21d5df89c12c0207e7f0e38dd6f0287ba6e43a66f',
  redeemer: '1db36714896afaee20c2cc817d170689870858b5204d3b5a94d217654e94b2fb',
  secretHash: 'c2da702654a5f5b14d5a969bd489da62282b7fdf12b0e8e13be5f110222b60c6',
  timelock: 144n,
};

test('the internal key is H + sha256("GardenHTLC")·G with H the BIP-341 NUMS point', () => {
  // BIP-341: H = lift_x(0x50929b74…), the x being sha256 of the uncompressed generator.
  assert.equal(hex.encode(taprootNumsKey()), '50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0');
  assert.equal(hex.encode(sha256(Point.BASE.toBytes(false))), hex.encode(taprootNumsKey()));
  assert.equal(HTLC_INTERNAL_KEY_HEX, '2160e11a135f94e536a5b222e5d09fd9db1be5f5f5e753920290c0410cf388f0');
});

test('the leaves match hand-assembled scripts', () => {
  const leaves = htlcLeaves(TERMS);
  // OP_SHA256 PUSH32 <secret_hash> OP_EQUALVERIFY PUSH32 <redeemer> OP_CHECKSIG
  assert.equal(hex.encode(leaves.redeem), `a8 20 ${TERMS.secretHash} 88 20 ${TERMS.redeemer} ac`.replaceAll(' ', ''));
  // PUSH2 <144 LE> OP_CHECKSEQUENCEVERIFY OP_DROP PUSH32 <initiator> OP_CHECKSIG
  assert.equal(hex.encode(leaves.refund), `02 9000 b2 75 20 ${TERMS.initiator} ac`.replaceAll(' ', ''));
  // PUSH32 <initiator> OP_CHECKSIG PUSH32 <redeemer> OP_CHECKSIGADD OP_2 OP_NUMEQUAL
  assert.equal(hex.encode(leaves.instantRefund), `20 ${TERMS.initiator} ac 20 ${TERMS.redeemer} ba 52 9c`.replaceAll(' ', ''));
});

// The timelock is a minimal script number: OP_1..OP_16, else little-endian with a sign byte if needed.
const timelocks: Array<[bigint, string]> = [
  [1n, '51'],
  [16n, '60'],
  [17n, '0111'],
  [127n, '017f'],
  [128n, '028000'],
  [255n, '02ff00'],
  [256n, '020001'],
  [32767n, '02ff7f'],
  [32768n, '03008000'],
  [65535n, '03ffff00'],
];
for (const [timelock, encoded] of timelocks) {
  test(`a timelock of ${timelock} is pushed as ${encoded}`, () => {
    assert.equal(hex.encode(htlcLeaves({ ...TERMS, timelock }).refund), `${encoded}b27520${TERMS.initiator}ac`);
  });
}

test('upper-case hex in the terms gives the same HTLC', () => {
  const upper = { ...TERMS, initiator: TERMS.initiator.toUpperCase(), secretHash: TERMS.secretHash.toUpperCase() };
  assert.equal(htlcAddress(upper, 'bitcoin'), htlcAddress(TERMS, 'bitcoin'));
});

const invalidTerms: Array<[string, Partial<Record<keyof HtlcScriptTerms, unknown>>, RegExp]> = [
  ['a timelock of 0', { timelock: 0n }, /^Error: HTLC timelock: must be a whole number of blocks from 1 to 65535$/],
  ['a negative timelock', { timelock: -1n }, /HTLC timelock/],
  ['a timelock over 16 bits', { timelock: 65536n }, /HTLC timelock/],
  ['a time-based CSV value', { timelock: (1n << 22n) | 10n }, /HTLC timelock/],
  ['a timelock as a number', { timelock: 144 }, /HTLC timelock/],
  ['an initiator off the curve', { initiator: 'eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34' }, /^Error: HTLC initiator: must be an x-only public key/],
  ['a compressed redeemer key', { redeemer: `02${TERMS.redeemer}` }, /^Error: HTLC redeemer: must be an x-only public key/],
  ['a 0x-prefixed redeemer', { redeemer: `0x${TERMS.redeemer}` }, /HTLC redeemer/],
  ['an address as initiator', { initiator: 'bc1p537s2efgqq0y8gqd0q08a5j065ac3863206pqey6gpvf8dux640q7frm27' }, /HTLC initiator/],
  ['a short secret hash', { secretHash: TERMS.secretHash.slice(2) }, /^Error: HTLC secretHash: must be 64 hex digits/],
  ['a 0x-prefixed secret hash', { secretHash: `0x${TERMS.secretHash}` }, /HTLC secretHash/],
  ['a non-hex secret hash', { secretHash: 'z'.repeat(64) }, /HTLC secretHash/],
];
for (const [name, change, message] of invalidTerms) {
  test(`terms with ${name} are refused`, () => {
    const terms = { ...TERMS, ...change } as HtlcScriptTerms;
    assert.throws(() => htlcLeaves(terms), message);
    assert.throws(() => htlcAddress(terms, 'bitcoin'), message);
  });
}

test('an unknown network is refused', () => {
  assert.throws(() => htlcAddress(TERMS, 'bitcoin_signet'), /unknown bitcoin-family network/);
});

// Known answers from Garden's own orders: the source swap of an order lists the HTLC terms and the
// swap_id, which is the HTLC address; its instant_refund_tx spends the HTLC through the instant
// refund leaf, so its witness carries that leaf and its control block.
const gardenOrders: Array<{ source: string; network: string; terms: HtlcScriptTerms; address: string; instantRefundTx: string }> = [
  {
    // A bitcoin_testnet order of 2024-12-12 (create_id 941b2d48…), mocked in an early version of
    // github.com/shanmukh0504/kiosk, src/store/swapStore.ts (Garden's web app).
    source: 'kiosk src/store/swapStore.ts',
    network: 'bitcoin_testnet',
    terms: {
      initiator: 'e39ec379ccddf417b54d68ed96aa580ad3177abeabe4f6da4b9fe092ad6bef6d',
      redeemer: '460f2e8ff81fc4e0a8e6ce7796704e3829e3e3eedb8db9390bdc51f4f04cf0a6',
      secretHash: '2d8697807567bbbe9fa7e7a6f493d65d654f2937f60ba1d532cd8eab1f172bfe',
      timelock: 144n,
    },
    address: 'tb1pfkhvlk9307hycmua58waul6pl6ek7afsz5yxrll3w90vdyazglks5x8v89',
    instantRefundTx:
      '020000000001010445e9793747e77e7c4ea135ab71b2e82931e49cf3fc657c2d6ac698236f8f200000000000ffffffff017a3f0f000000000016001432c4b6fce09aabd367cd9b03ea19189c341fd2dd044077479a6c49a861ee1d01aa87456d3562999334bb81dc59a2ef55e349db3c708b4242ffa406361f397dbb4994039122749fb3c63378ab81499b635793cd38767f4077479a6c49a861ee1d01aa87456d3562999334bb81dc59a2ef55e349db3c708b4242ffa406361f397dbb4994039122749fb3c63378ab81499b635793cd38767f4620e39ec379ccddf417b54d68ed96aa580ad3177abeabe4f6da4b9fe092ad6bef6dac20460f2e8ff81fc4e0a8e6ce7796704e3829e3e3eedb8db9390bdc51f4f04cf0a6ba529c61c02160e11a135f94e536a5b222e5d09fd9db1be5f5f5e753920290c0410cf388f0b233c1e5ac6de54cf887d9afcf273e1fe97b873f1e0d54b59181740e78b11b2fc7190609dc7a07d499936e1a77bf667c4ca576b34b54542005f856584eabd6f200000000',
  },
  {
    // A bitcoin mainnet order (initiated at block 934704), the default mock order of a later version
    // of github.com/shanmukh0504/kiosk, tests/playwright/swap.spec.ts; the initiator in the script
    // is the order's `delegate` key.
    source: 'kiosk tests/playwright/swap.spec.ts',
    network: 'bitcoin',
    terms: {
      initiator: 'babd4bece34791d7126c148266e1726421660567dcca68a7097a65d7a7f86d9b',
      redeemer: '03c15ad9d33d21a1a7ff75276dd530717988003b977525c726f72b7ccf4dc610',
      secretHash: '6c5b26f0767e74c25f0ab627f494e5296210426a46e229c172e81acb6b340a83',
      timelock: 144n,
    },
    address: 'bc1p537s2efgqq0y8gqd0q08a5j065ac3863206pqey6gpvf8dux640q7frm27',
    instantRefundTx:
      '020000000001012cbfd464eb7eb78c0c97f53a95d1f9a88ec37e2e4c5ffca77e3c9a9596864ebd0000000000ffffffff01aaea270000000000160014b73db83debee785f2f869bbc19930bd0b420c16604412854f3e4d9c905d43996314ca86b7dea8cceff0cdcdd57b5606123517f378bc06227a4168fe60613fe0d9b3e1387ea1e68be1c17a2f6416273765912f6d2130583412854f3e4d9c905d43996314ca86b7dea8cceff0cdcdd57b5606123517f378bc06227a4168fe60613fe0d9b3e1387ea1e68be1c17a2f6416273765912f6d21305834620babd4bece34791d7126c148266e1726421660567dcca68a7097a65d7a7f86d9bac2003c15ad9d33d21a1a7ff75276dd530717988003b977525c726f72b7ccf4dc610ba529c61c02160e11a135f94e536a5b222e5d09fd9db1be5f5f5e753920290c0410cf388f0e439a922488f0650969c5026bf37c6fac8a330741e89fdf0ed95c56268e6bf2296c0bf91f39f0c28f918dbda2d0120531396f626a587e8035fffc3900f7f3a9700000000',
  },
];
for (const order of gardenOrders) {
  test(`known answer: Garden's ${order.network} order (${order.source}) has HTLC address ${order.address}`, () => {
    assert.equal(htlcAddress(order.terms, order.network), order.address);
  });

  test(`known answer: the instant refund witness of Garden's ${order.network} order is our leaf and control block`, () => {
    const witness = RawTx.decode(hex.decode(order.instantRefundTx)).witnesses?.[0];
    assert.ok(witness && witness.length === 4, 'witness [redeemer sig, initiator sig, leaf, control block]');
    const { instantRefund } = htlcPayment(order.terms, order.network).spends;
    assert.equal(hex.encode(witness[2]!), hex.encode(instantRefund.script));
    assert.equal(hex.encode(witness[3]!), hex.encode(instantRefund.controlBlock));
  });
}

test("known answer: the control blocks of garden-rs's HTLC tests", () => {
  // Expected values from TARS-Finance/Tars-rs, crates/bitcoin/src/htlc/htlc.rs (a garden-rs
  // derivative), test_get_control_block; the control block does not depend on the network.
  const { spends } = htlcPayment(TERMS, 'bitcoin_regtest');
  const internal = `c0${HTLC_INTERNAL_KEY_HEX}`;
  const redeemHash = 'f7ad405ea98aad269ae6466ebcd47587ac0e8f61bc8909470bb5171c63c4e6e7';
  assert.equal(hex.encode(spends.redeem.controlBlock), `${internal}9ccdba96cfd33ad72291a7087b12f4b0c4ab4b571cd91d31de6169c33e166621`);
  assert.equal(hex.encode(spends.refund.controlBlock), `${internal}9baa85dee2660f052938ad9556d87dd31dc9e809919ed0d0d2b3b1a75dcf8aa5${redeemHash}`);
  assert.equal(hex.encode(spends.instantRefund.controlBlock), `${internal}72f6eb147eed8bbf8b166d31b631110f6de09c6e69ae766e92dd42d6549174b0${redeemHash}`);
});

// A second, independent derivation of the address straight from BIP-341 with @noble/curves, checked
// against btc-signer's p2tr on every network.
for (const network of Object.keys(HRP)) {
  for (const [name, terms] of [
    ['garden-rs key set', TERMS],
    ['timelock 7', { ...TERMS, timelock: 7n }],
    ['swapped parties', { ...TERMS, initiator: TERMS.redeemer, redeemer: TERMS.initiator }],
  ] as const) {
    test(`BIP-341 by hand gives htlcAddress on ${network} (${name})`, () => {
      const { redeem, refund, instantRefund } = htlcLeaves(terms);
      const root = tapBranch(tapLeaf(redeem), tapBranch(tapLeaf(refund), tapLeaf(instantRefund)));
      const { x } = tweak(hex.decode(HTLC_INTERNAL_KEY_HEX), root);
      const expected = bech32m.encode(HRP[network]!, [1, ...bech32m.toWords(x)]);
      assert.equal(htlcAddress(terms, network), expected);
    });
  }
}

test('each leaf is in the tree, at its depth, with a control block that verifies', () => {
  const payment = htlcPayment(TERMS, 'bitcoin');
  const leaves = htlcLeaves(TERMS);
  const outputKey = payment.tweakedPubkey;
  assert.equal(payment.leaves.length, 3);
  assert.equal(payment.tapLeafScript.length, 3);
  for (const [name, depth] of [
    ['redeem', 1],
    ['refund', 2],
    ['instantRefund', 2],
  ] as const) {
    const { script, controlBlock } = payment.spends[name];
    assert.equal(hex.encode(script), hex.encode(leaves[name]), name);
    assert.equal(controlBlock.length, 33 + 32 * depth, `${name}: depth`);
    assert.ok(verifyControlBlock(controlBlock, script, outputKey), `${name}: control block verifies`);
    assert.ok(
      payment.leaves.some((l) => hex.encode(l.script) === hex.encode(script) && l.path.length === depth),
      `${name}: in the tree`,
    );
  }
  // A control block does not verify for another leaf, nor against another output.
  assert.ok(!verifyControlBlock(payment.spends.refund.controlBlock, leaves.instantRefund, outputKey));
  const other = htlcPayment({ ...TERMS, timelock: 145n }, 'bitcoin').tweakedPubkey;
  assert.ok(!verifyControlBlock(payment.spends.redeem.controlBlock, leaves.redeem, other));
});

test('the same terms give the same output key on every network, with its own HRP', () => {
  const keys = new Set(Object.keys(HRP).map((n) => hex.encode(htlcPayment(TERMS, n).tweakedPubkey)));
  assert.equal(keys.size, 1);
  for (const [network, hrp] of Object.entries(HRP)) assert.ok(htlcAddress(TERMS, network).startsWith(`${hrp}1p`));
});

function tapLeaf(script: Uint8Array): Uint8Array {
  assert.ok(script.length < 0xfd, 'one-byte compactSize');
  return utils.taggedHash('TapLeaf', Uint8Array.of(0xc0, script.length), script);
}

function tapBranch(a: Uint8Array, b: Uint8Array): Uint8Array {
  // Same-length hex strings sort like the bytes they encode.
  const [first, second] = hex.encode(a) < hex.encode(b) ? [a, b] : [b, a];
  return utils.taggedHash('TapBranch', first, second);
}

function tweak(internalKey: Uint8Array, root: Uint8Array): { x: Uint8Array; oddY: boolean } {
  const t = toBigInt(utils.taggedHash('TapTweak', internalKey, root));
  const q = utils.lift_x(toBigInt(internalKey)).add(Point.BASE.multiply(t));
  return { x: utils.pointToBytes(q), oddY: q.toAffine().y % 2n === 1n };
}

/** BIP-341 script-path verification of a control block against an output key. */
function verifyControlBlock(controlBlock: Uint8Array, script: Uint8Array, outputKey: Uint8Array): boolean {
  if (controlBlock.length < 33 || (controlBlock.length - 33) % 32 !== 0) return false;
  if ((controlBlock[0]! & 0xfe) !== 0xc0) return false;
  let k = tapLeaf(script);
  for (let i = 33; i < controlBlock.length; i += 32) k = tapBranch(k, controlBlock.slice(i, i + 32));
  const q = tweak(controlBlock.slice(1, 33), k);
  return hex.encode(q.x) === hex.encode(outputKey) && q.oddY === ((controlBlock[0]! & 1) === 1);
}
