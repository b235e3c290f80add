// Key files in the Web3 Secret Storage version 3 format: round trips on both curves and for the secret
// key, the spec's own test vectors, ethers as an independent implementation, and every way a file can
// be wrong, each a KeyFileError naming the file and never the password or the key.
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { keccak256 } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { solanaAddressOfKey } from '../../src/chains/solana/keys.ts';
import {
  decryptKeyFile,
  decryptKeystore,
  DEFAULT_SCRYPT_N,
  encryptKey,
  KeyFileError,
  readKeyFileInfo,
  writeKeyFile,
} from '../../src/keys/key-file.ts';

/** A low n: these tests derive many keys (the standard n has a test of its own). */
const N = 1024;
const PASSWORD = 'correct horse battery staple';
const dir = mkdtempSync(join(tmpdir(), 'hashlock-key-file-'));
let files = 0;
const fresh = (name = 'key') => join(dir, `${name}-${++files}.json`);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const evmKey = () => Uint8Array.from(Buffer.from(generatePrivateKey().slice(2), 'hex'));

/** `fn` throws a KeyFileError naming `file` and matching `problem`, with neither the password nor `key` in it. */
function assertKeyFileError(fn: () => unknown, file: string, problem: RegExp, key?: Uint8Array): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KeyFileError, `a KeyFileError, not ${String(err)}`);
    assert.ok(err.message.startsWith(`${file}: `), `names the file: ${err.message}`);
    assert.match(err.message, problem);
    assert.ok(!err.message.includes(PASSWORD), 'the password is not in the message');
    if (key) assert.ok(!err.message.toLowerCase().includes(hex(key)), 'the key is not in the message');
    return true;
  });
}

test('a secp256k1 key round-trips through a version 3 keystore with its EVM address, written 0600 and never overwritten', () => {
  const key = evmKey();
  const file = fresh('relayer');
  const written = writeKeyFile(file, key, PASSWORD, { role: 'relayer' }, { scryptN: N });
  const address = privateKeyToAddress(`0x${hex(key)}`);
  assert.deepEqual({ ...written, id: undefined }, { file, id: undefined, role: 'relayer', curve: 'secp256k1', address });

  const text = readFileSync(file, 'utf8');
  assert.ok(!text.toLowerCase().includes(hex(key)), 'the key is not in the file');
  const json = JSON.parse(text);
  assert.equal(json.version, 3);
  assert.match(json.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(json.id, written.id);
  assert.equal(json.address, address.slice(2).toLowerCase(), "the spec's form: lowercase hex, no 0x");
  assert.equal(json.crypto.cipher, 'aes-128-ctr');
  assert.match(json.crypto.cipherparams.iv, /^[0-9a-f]{32}$/);
  assert.match(json.crypto.ciphertext, /^[0-9a-f]{64}$/);
  assert.equal(json.crypto.kdf, 'scrypt');
  assert.deepEqual({ ...json.crypto.kdfparams, salt: undefined }, { dklen: 32, n: N, r: 8, p: 1, salt: undefined });
  assert.match(json.crypto.kdfparams.salt, /^[0-9a-f]{64}$/);
  assert.deepEqual(json.hashlock, { role: 'relayer', curve: 'secp256k1' });
  // The MAC as the spec defines it: keccak256(derivedKey[16..32] ++ ciphertext).
  const derived = scryptSync(PASSWORD, Buffer.from(json.crypto.kdfparams.salt, 'hex'), 32, { N, r: 8, p: 1 });
  assert.equal(json.crypto.mac, keccak256(Buffer.concat([derived.subarray(16), Buffer.from(json.crypto.ciphertext, 'hex')])).slice(2));
  assert.equal(statSync(file).mode & 0o777, 0o600);

  assert.deepEqual(readKeyFileInfo(file), written, 'read without the password');
  assert.deepEqual(decryptKeyFile(file, PASSWORD), { ...written, key });
  assertKeyFileError(() => writeKeyFile(file, evmKey(), PASSWORD, { role: 'relayer' }, { scryptN: N }), file, /exists already: not overwritten/);
  assert.deepEqual(decryptKeyFile(file, PASSWORD).key, key, 'the first key is still there');
});

test('an ed25519 seed round-trips with its base58 Solana address; the secret key has no curve and no address', () => {
  const seed = Uint8Array.from(randomBytes(32));
  const file = fresh('solver');
  const written = writeKeyFile(file, seed, PASSWORD, { role: 'solver', curve: 'ed25519' }, { scryptN: N });
  assert.equal(written.curve, 'ed25519');
  assert.equal(written.address, solanaAddressOfKey(`0x${hex(seed)}`));
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).address, written.address);
  assert.deepEqual(decryptKeyFile(file, PASSWORD).key, seed);

  const secret = Uint8Array.from(randomBytes(32));
  const secretFile = fresh('secret');
  const info = writeKeyFile(secretFile, secret, PASSWORD, { role: 'secret' }, { scryptN: N });
  assert.equal(info.curve, undefined);
  assert.equal(info.address, undefined);
  const json = JSON.parse(readFileSync(secretFile, 'utf8'));
  assert.equal(json.address, undefined);
  assert.deepEqual(json.hashlock, { role: 'secret' });
  assert.deepEqual(decryptKeyFile(secretFile, PASSWORD).key, secret);
  assert.throws(() => encryptKey(secret, PASSWORD, { role: 'secret', curve: 'ed25519' }), /no curve/);
  assert.throws(() => encryptKey(new Uint8Array(32), PASSWORD, { role: 'relayer' }), /not a valid secp256k1 private key/);
  assert.throws(() => encryptKey(new Uint8Array(31), PASSWORD, { role: 'solver', curve: 'ed25519' }), /must be 32 bytes/);
  assert.throws(() => encryptKey(seed, PASSWORD, { role: 'solver' }, { scryptN: 1000 }), /power of two/);
});

test("by default scrypt's n is the standard 262144", () => {
  const key = evmKey();
  const json = encryptKey(key, PASSWORD, { role: 'fee-signer' });
  assert.equal((json.crypto as { kdfparams: { n: number } }).kdfparams.n, DEFAULT_SCRYPT_N);
  assert.equal(DEFAULT_SCRYPT_N, 262_144);
  assert.deepEqual(decryptKeystore(json, PASSWORD, 'default.json').key, key);
});

// The Web3 Secret Storage definition's test vectors (password "testpassword"), as go-ethereum's
// accounts/keystore/testdata/v3_test_vector.json keeps them, with its 31-byte key from old geth.
const SPEC_KEY = '7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d';
const SPEC_SCRYPT = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '83dbcc02d8ccb40e466191a123791e0e' },
    ciphertext: 'd172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c',
    kdf: 'scrypt',
    kdfparams: { dklen: 32, n: 262144, r: 1, p: 8, salt: 'ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19' },
    mac: '2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
const SPEC_PBKDF2 = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '6087dab2f9fdbbfaddc31a909735c1e6' },
    ciphertext: '5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46',
    kdf: 'pbkdf2',
    kdfparams: { c: 262144, dklen: 32, prf: 'hmac-sha256', salt: 'ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd' },
    mac: '517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
const GETH_31_BYTE = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: 'e0c41130a323adc1446fc82f724bca2f' },
    ciphertext: '9517cd5bdbe69076f9bf5057248c6c050141e970efa36ce53692d5d59a3984',
    kdf: 'scrypt',
    kdfparams: { dklen: 32, n: 2, r: 8, p: 1, salt: '711f816911c92d649fb4c84b047915679933555030b3552c1212609b38208c63' },
    mac: 'd5e116151c6aa71470e67a7d42c9620c75c4d23229847dcc127794f0732b0db5',
  },
  id: 'fecfc4ce-e956-48fd-953b-30f8b52ed66c',
  version: 3,
};

test("the spec's test vectors decrypt: scrypt (its r = 1 is past OpenSSL's bound), PBKDF2, and old geth's 31-byte key", () => {
  for (const [name, vector] of [
    ['scrypt', SPEC_SCRYPT],
    ['pbkdf2', SPEC_PBKDF2],
  ] as const) {
    const decrypted = decryptKeystore(vector, 'testpassword', name);
    assert.equal(hex(decrypted.key), SPEC_KEY, name);
    assert.deepEqual([decrypted.role, decrypted.curve, decrypted.address], [undefined, 'secp256k1', undefined], `${name}: another program's keystore`);
  }
  assertKeyFileError(() => decryptKeystore(SPEC_PBKDF2, 'testpassworD', 'pbkdf2'), 'pbkdf2', /wrong password/);
  const short = decryptKeystore(GETH_31_BYTE, 'foo', 'geth-31');
  assert.equal(hex(short.key), '00fa7b3db73dc7dfdf8c5fbdb796d741e4488628c41fc4febd9160a866ba0f35', 'left-padded to 32 bytes');
});

type Ethers = {
  encryptKeystoreJsonSync(account: { address: string; privateKey: string }, password: string, options?: { scrypt?: { N?: number } }): string;
  decryptKeystoreJsonSync(json: string, password: string): { address: string; privateKey: string };
};
// ethers is no dependency of the project (tronweb brings it): it serves only as an independent implementation here.
const ETHERS = 'ethers';
const ethers = (await import(ETHERS).catch(() => undefined)) as Ethers | undefined;
const noEthers = ethers ? false : 'ethers is not in node_modules (tronweb brings it): no independent implementation to check against';
if (noEthers) console.warn(`\n*** SKIPPING the ethers keystore test: ${noEthers} ***\n`);

test("ethers, an independent implementation, reads these key files and these read its keystores", { skip: noEthers }, () => {
  const key = evmKey();
  const privateKey = `0x${hex(key)}`;
  const address = privateKeyToAddress(privateKey as `0x${string}`);
  const theirs = ethers!.encryptKeystoreJsonSync({ address, privateKey }, PASSWORD, { scrypt: { N } });
  const read = decryptKeystore(JSON.parse(theirs), PASSWORD, 'ethers.json');
  assert.deepEqual([hex(read.key), read.address, read.role], [hex(key), address, undefined]);

  const file = fresh('for-ethers');
  writeKeyFile(file, key, PASSWORD, { role: 'deployer' }, { scryptN: N });
  const account = ethers!.decryptKeystoreJsonSync(readFileSync(file, 'utf8'), PASSWORD);
  assert.deepEqual([account.privateKey, account.address], [privateKey, address]);
});

test('a wrong password is one KeyFileError naming the file, with neither the password nor the key in it', () => {
  const key = evmKey();
  const file = fresh();
  writeKeyFile(file, key, PASSWORD, { role: 'solver' }, { scryptN: N });
  assertKeyFileError(() => decryptKeyFile(file, 'correct horse battery stapler'), file, /^[^:]+: wrong password, or the file was altered \(its MAC does not match\)$/, key);
  assertKeyFileError(() => decryptKeyFile(file, ''), file, /wrong password/, key);
});

test('a damaged file is a KeyFileError naming the file and what is wrong, never the password or the key', () => {
  const key = evmKey();
  const seed = Uint8Array.from(randomBytes(32));
  const base = encryptKey(key, PASSWORD, { role: 'relayer' }, { scryptN: N }) as any;
  const ed = encryptKey(seed, PASSWORD, { role: 'solver', curve: 'ed25519' }, { scryptN: N }) as any;
  const edit = (from: any, change: (json: any) => void) => {
    const json = structuredClone(from);
    change(json);
    return JSON.stringify(json);
  };
  const cases: Array<[string, string, RegExp, boolean?]> = [
    ['empty', '', /not valid JSON/],
    // JSON.parse's own message would quote this text, the plaintext key.
    ['a plaintext key, not JSON', `${hex(key)}\n`, /not valid JSON$/],
    ['unterminated JSON', `{"version": 3, "key": "${hex(key)}`, /not valid JSON$/],
    ['an array', '[]', /not a JSON object/],
    ['version 1', edit(base, (j) => (j.version = 1)), /version: 1, only Web3 Secret Storage version 3/],
    ['no version', edit(base, (j) => delete j.version), /version: missing/],
    ['no crypto', edit(base, (j) => delete j.crypto), /crypto: missing/],
    ['another cipher', edit(base, (j) => (j.crypto.cipher = 'aes-128-cbc')), /crypto\.cipher: aes-128-cbc is not read \(aes-128-ctr only\)/],
    ['no cipherparams', edit(base, (j) => delete j.crypto.cipherparams), /crypto\.cipherparams: missing/],
    ['a short iv', edit(base, (j) => (j.crypto.cipherparams.iv = j.crypto.cipherparams.iv.slice(2))), /crypto\.cipherparams\.iv: must be 16 bytes of hex/],
    ['a ciphertext too long', edit(base, (j) => (j.crypto.ciphertext += '00')), /crypto\.ciphertext: must be 1 to 32 bytes of hex/],
    ['a short ed25519 ciphertext', edit(ed, (j) => (j.crypto.ciphertext = j.crypto.ciphertext.slice(2))), /crypto\.ciphertext: must be 32 bytes of hex/],
    ['a ciphertext not hex', edit(base, (j) => (j.crypto.ciphertext = 'zz'.repeat(32))), /crypto\.ciphertext: must be/],
    ['a short mac', edit(base, (j) => (j.crypto.mac = j.crypto.mac.slice(2))), /crypto\.mac: must be 32 bytes of hex/],
    ['another kdf', edit(base, (j) => (j.crypto.kdf = 'argon2id')), /crypto\.kdf: argon2id is not read \(scrypt or pbkdf2\)/],
    ['no kdfparams', edit(base, (j) => delete j.crypto.kdfparams), /crypto\.kdfparams: missing/],
    ['n not a power of two', edit(base, (j) => (j.crypto.kdfparams.n = 1000)), /crypto\.kdfparams\.n: must be a power of two/],
    ['n and r asking for 4 GiB', edit(base, (j) => Object.assign(j.crypto.kdfparams, { n: 2 ** 20, r: 32 })), /crypto\.kdfparams: .* refused/],
    ['a short dklen', edit(base, (j) => (j.crypto.kdfparams.dklen = 16)), /crypto\.kdfparams\.dklen: must be 32 to 64/],
    ['no salt', edit(base, (j) => delete j.crypto.kdfparams.salt), /crypto\.kdfparams\.salt: must be 16 to 64 bytes of hex/],
    ['an unknown role', edit(base, (j) => (j.hashlock.role = 'admin')), /hashlock\.role: must be one of relayer, solver, fee-signer, deployer, secret/],
    ['an unknown curve', edit(base, (j) => (j.hashlock.curve = 'p256')), /hashlock\.curve: must be one of secp256k1, ed25519/],
    ['a malformed address', edit(base, (j) => (j.address = 'not an address')), /address: must be a 20-byte hex address/],
    ['a malformed Solana address', edit(ed, (j) => (j.address = '0OIl')), /address: must be a base58 ed25519 public key/],
    // These pass every check of the form and fail on decryption.
    ['a flipped ciphertext bit', edit(base, (j) => (j.crypto.ciphertext = (j.crypto.ciphertext[0] === '0' ? '1' : '0') + j.crypto.ciphertext.slice(1))), /wrong password, or the file was altered/, true],
    ['another address', edit(base, (j) => (j.address = privateKeyToAddress(generatePrivateKey()).slice(2))), /address: does not match the key the file holds/, true],
    ['another Solana address', edit(ed, (j) => (j.address = solanaAddressOfKey(generatePrivateKey()))), /address: does not match the key the file holds/, true],
  ];
  for (const [name, text, problem, decrypting] of cases) {
    const file = fresh(name.replaceAll(' ', '-'));
    writeFileSync(file, text);
    assertKeyFileError(() => decryptKeyFile(file, PASSWORD), file, problem, key);
    assertKeyFileError(() => decryptKeyFile(file, PASSWORD), file, problem, seed);
    if (!decrypting) assertKeyFileError(() => readKeyFileInfo(file), file, problem, key);
  }
  const missing = join(dir, 'missing.json');
  assertKeyFileError(() => readKeyFileInfo(missing), missing, /cannot be read \(ENOENT\)/);
});
