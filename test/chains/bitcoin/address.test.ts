import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base58check as base58checkFor, bech32, bech32m } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { isXOnlyPublicKey, normalizeBitcoinAddress } from '../../../src/chains/bitcoin/address.ts';

const base58check = base58checkFor(sha256);

// Written out here (not taken from network.ts) so the encodings are checked against the chains'
// own parameters.
const PARAMS: Record<string, { hrp: string; pkh: number; sh: number }> = {
  bitcoin: { hrp: 'bc', pkh: 0x00, sh: 0x05 },
  bitcoin_testnet: { hrp: 'tb', pkh: 0x6f, sh: 0xc4 },
  bitcoin_regtest: { hrp: 'bcrt', pkh: 0x6f, sh: 0xc4 },
  litecoin: { hrp: 'ltc', pkh: 0x30, sh: 0x32 },
  litecoin_testnet: { hrp: 'tltc', pkh: 0x6f, sh: 0x3a },
  litecoin_regtest: { hrp: 'rltc', pkh: 0x6f, sh: 0x3a },
};
const NETWORK_NAMES = Object.keys(PARAMS);

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);
const base58 = (version: number, payload: Uint8Array) => base58check.encode(Uint8Array.of(version, ...payload));
const segwit = (hrp: string, version: number, program: Uint8Array, coder = version === 0 ? bech32 : bech32m) =>
  coder.encode(hrp, [version, ...coder.toWords(program)]);

const KINDS = {
  P2PKH: (p: (typeof PARAMS)[string]) => base58(p.pkh, bytes(20, 0x11)),
  P2SH: (p: (typeof PARAMS)[string]) => base58(p.sh, bytes(20, 0x22)),
  P2WPKH: (p: (typeof PARAMS)[string]) => segwit(p.hrp, 0, bytes(20, 0x33)),
  P2WSH: (p: (typeof PARAMS)[string]) => segwit(p.hrp, 0, bytes(32, 0x44)),
  P2TR: (p: (typeof PARAMS)[string]) => segwit(p.hrp, 1, bytes(32, 0x55)),
};

// Every kind encoded for every network, checked on every network: valid exactly where the encoding
// is that network's own (testnet and regtest share their base58 version bytes, so those match).
for (const [kind, encode] of Object.entries(KINDS)) {
  for (const from of NETWORK_NAMES) {
    const address = encode(PARAMS[from]!);
    test(`${kind} of ${from} is valid exactly on networks with the same encoding`, () => {
      for (const on of NETWORK_NAMES) {
        const valid = encode(PARAMS[on]!) === address;
        assert.equal(normalizeBitcoinAddress(on, address), valid ? address : undefined, `on ${on}`);
      }
    });
  }
}

for (const network of NETWORK_NAMES) {
  const p = PARAMS[network]!;
  const invalid: Array<[string, string]> = [
    ['an empty string', ''],
    ['surrounding whitespace', ` ${KINDS.P2WPKH(p)}`],
    ['a bad base58 checksum', flipLast(KINDS.P2PKH(p))],
    ['a bad bech32 checksum', flipLast(KINDS.P2WPKH(p))],
    ['a bad bech32m checksum', flipLast(KINDS.P2TR(p))],
    ['mixed-case bech32', mixCase(KINDS.P2WSH(p))],
    ['mixed-case bech32m', mixCase(KINDS.P2TR(p))],
    ['a base58 payload of 21 bytes', base58(p.pkh, bytes(21, 0x11))],
    ['a base58 payload of 19 bytes', base58(p.sh, bytes(19, 0x22))],
    ['an unknown base58 version byte', base58(0x1e, bytes(20, 0x11))],
    ['a v0 program of 21 bytes', segwit(p.hrp, 0, bytes(21, 0x33))],
    ['a v0 program of 31 bytes', segwit(p.hrp, 0, bytes(31, 0x44))],
    ['a v1 program of 20 bytes', segwit(p.hrp, 1, bytes(20, 0x55))],
    ['a v1 program of 33 bytes', segwit(p.hrp, 1, bytes(33, 0x55))],
    ['a v0 program with a bech32m checksum', segwit(p.hrp, 0, bytes(20, 0x33), bech32m)],
    ['a v1 program with a bech32 checksum', segwit(p.hrp, 1, bytes(32, 0x55), bech32)],
    ['a future witness version', segwit(p.hrp, 2, bytes(32, 0x66))],
    ['pay-to-anchor', segwit(p.hrp, 1, Uint8Array.of(0x4e, 0x73))],
    ['the wrong HRP', segwit(`${p.hrp}x`, 0, bytes(20, 0x33))],
  ];
  for (const [name, address] of invalid) {
    test(`${network} refuses ${name}`, () => {
      assert.equal(normalizeBitcoinAddress(network, address), undefined);
    });
  }

  test(`${network} accepts all-uppercase bech32 and bech32m, lowercasing them`, () => {
    for (const address of [KINDS.P2WPKH(p), KINDS.P2WSH(p), KINDS.P2TR(p)]) {
      assert.equal(normalizeBitcoinAddress(network, address.toUpperCase()), address);
    }
  });
}

// Addresses seen in public code (Garden's HTLC addresses among them); each was checked once, outside
// this suite, with the BIP-173/BIP-350 and Base58Check reference algorithms.
const realAddresses: Array<[string, string]> = [
  ['bitcoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'],
  ['bitcoin', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'],
  ['bitcoin', 'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3'],
  ['bitcoin', 'bc1p537s2efgqq0y8gqd0q08a5j065ac3863206pqey6gpvf8dux640q7frm27'],
  ['bitcoin_testnet', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'],
  ['bitcoin_testnet', '2N4j24L4xaKRS2uxKtxgAhiJY25bnp4Wkcm'],
  ['bitcoin_testnet', 'tb1qxtztdl8qn24axe7dnvp75xgcns6pl5ka9tzjru'],
  ['bitcoin_testnet', 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7'],
  ['bitcoin_testnet', 'tb1pfkhvlk9307hycmua58waul6pl6ek7afsz5yxrll3w90vdyazglks5x8v89'],
  ['bitcoin_regtest', 'bcrt1q322tg0y2hzyp9zztr7d2twdclhqg88anvzxwwr'],
  ['litecoin', 'ltc1qq0ptdjsuvhw6gz9m4huwmhq40gpyljwn5hncxz'],
  ['litecoin', 'ltc1qf6pwfkw4wd0fetq2pfrwzlfknskjg6nyvt6ngv'],
  ['litecoin_testnet', 'tltc1qa0kd2d39nmeph3hvcx8ytv65ztcywg5sazhtw8'],
  ['litecoin_testnet', 'QhSWVppS12Fqv6dh3rAyoB18jXh5mB1hoC'],
  ['litecoin_regtest', 'rltc1qj08ys4ct2hzzc2hcz6h2hgrvlmsjynawf4nr3r'],
  ['litecoin_regtest', 'rltc1qlkp8904tzjyd8qwzjl550k040qz08ulaeajgcn'],
];
for (const [network, address] of realAddresses) {
  test(`${network} accepts the real address ${address}`, () => {
    assert.equal(normalizeBitcoinAddress(network, address), address);
  });
}

test("Litecoin's legacy 3…/2… P2SH encodings are refused", () => {
  assert.equal(normalizeBitcoinAddress('litecoin', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'), undefined);
  assert.equal(normalizeBitcoinAddress('litecoin_testnet', '2N4j24L4xaKRS2uxKtxgAhiJY25bnp4Wkcm'), undefined);
});

test('an unknown network name throws', () => {
  assert.throws(() => normalizeBitcoinAddress('dogecoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'), /unknown bitcoin-family network/);
});

const xOnly: Array<[string, string, boolean]> = [
  ['the generator x', '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', true],
  ['upper-case hex', '79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798', true],
  ['a BIP-340 vector key', 'dff1d77f2a671c5f36183726db2341be58feae1da2deced843240f7b502ba659', true],
  ['BIP-340: not on the curve', 'eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34', false],
  ['BIP-340: x beyond the field size', 'fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc30', false],
  ['x = 0', '0'.repeat(64), false],
  ['63 digits', '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f8179', false],
  ['65 digits', '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f817980', false],
  ['a 0x prefix', '0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f817', false],
  ['a compressed key', '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', false],
  ['non-hex', 'g9be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', false],
];
for (const [name, key, valid] of xOnly) {
  test(`isXOnlyPublicKey: ${name} is ${valid ? 'valid' : 'invalid'}`, () => {
    assert.equal(isXOnlyPublicKey(key), valid);
  });
}

function flipLast(address: string): string {
  // 'p' and 'q' are in both the bech32 and the base58 alphabets.
  return address.slice(0, -1) + (address.endsWith('q') ? 'p' : 'q');
}

/** Upper-cases the first letter after the bech32 separator, leaving the rest lower-case. */
function mixCase(address: string): string {
  const i = address.lastIndexOf('1') + 1;
  const j = i + address.slice(i).search(/[a-z]/);
  return address.slice(0, j) + address.charAt(j).toUpperCase() + address.slice(j + 1);
}
