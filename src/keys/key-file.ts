// Key files: a private key at rest, encrypted under a password in the Web3 Secret Storage version 3
// format (the keystore of geth, ethers and the wallets of their era): scrypt, AES-128-CTR and a keccak
// MAC. The same container holds Solana ed25519 seeds and the service's secret-box key, marked in a
// `hashlock` field ({role, curve}) that other programs ignore.
import { createCipheriv, createDecipheriv, pbkdf2Sync, randomBytes, randomUUID, scryptSync, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { scrypt as scryptInJs } from '@noble/hashes/scrypt.js';
import { base58 } from '@scure/base';
import { getAddress, keccak256 } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';

export const KEY_ROLES = ['relayer', 'solver', 'fee-signer', 'deployer', 'secret'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];
export const KEY_CURVES = ['secp256k1', 'ed25519'] as const;
export type KeyCurve = (typeof KEY_CURVES)[number];

/** scrypt's n as geth and ethers write it ("standard"): about half a second and 256 MB to derive. */
export const DEFAULT_SCRYPT_N = 262_144;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const MAX_SCRYPT_N = 2 ** 20;
/** What a file may make the KDF cost, so that a damaged or hostile file cannot exhaust the process. */
const MAX_SCRYPT_MEMORY = 2 ** 30;
const MAX_SCRYPT_WORK = 2 ** 31;
const MAX_PBKDF2_ROUNDS = 2 ** 24;

/** A key file that cannot be read, decrypted or trusted. The message names the file, never the password or the key. */
export class KeyFileError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'KeyFileError';
  }
}

/** What a key file says about its key, read without the password. */
export interface KeyFileInfo {
  file: string;
  id: string | undefined;
  /** Undefined for a keystore another program wrote (it has no `hashlock` field). */
  role: KeyRole | undefined;
  /** The key's curve; undefined for the secret-box key, which is no curve's. */
  curve: KeyCurve | undefined;
  /** In the family's form (EVM: 0x and checksummed; Solana: base58); undefined when the file names none. */
  address: string | undefined;
}

export interface DecryptedKey extends KeyFileInfo {
  /** 32 bytes: a secp256k1 private key, an ed25519 seed or the secret-box key. */
  key: Uint8Array;
}

export interface KeyKind {
  role: KeyRole;
  /** Default secp256k1; none for the secret role. */
  curve?: KeyCurve;
}

export interface EncryptOptions {
  /** scrypt's n, a power of two (default DEFAULT_SCRYPT_N). Lower only in tests: it is the brute-force cost. */
  scryptN?: number;
}

/** The curve a role's key is on: the given one, secp256k1 by default, none for the secret-box key. */
export function curveOfKind(kind: KeyKind): KeyCurve | undefined {
  if (kind.role === 'secret') {
    if (kind.curve) throw new Error('the secret key is a symmetric key: it has no curve');
    return undefined;
  }
  return kind.curve ?? 'secp256k1';
}

/** Why `key` cannot be a key of `curve` (undefined: the secret-box key), or undefined when it can. */
export function keyProblem(key: Uint8Array, curve: KeyCurve | undefined): string | undefined {
  if (key.length !== 32) return 'must be 32 bytes';
  if (curve === 'secp256k1' && !secp256k1.utils.isValidSecretKey(key)) return 'is not a valid secp256k1 private key (zero, or not below the curve order)';
  return undefined;
}

/** The key's address in its family's form: EVM 0x-checksummed for secp256k1, base58 for ed25519. */
export function addressOfKey(key: Uint8Array, curve: KeyCurve): string {
  return curve === 'secp256k1' ? privateKeyToAddress(`0x${Buffer.from(key).toString('hex')}`) : base58.encode(ed25519.getPublicKey(key));
}

/** A fresh random key of the kind. */
export function generateKey(kind: KeyKind): Uint8Array {
  return curveOfKind(kind) === 'secp256k1' ? secp256k1.utils.randomSecretKey() : Uint8Array.from(randomBytes(32));
}

/** Encrypts `key` under `password`: the key file's JSON. */
export function encryptKey(key: Uint8Array, password: string, kind: KeyKind, options: EncryptOptions = {}): Record<string, unknown> {
  const curve = curveOfKind(kind);
  const problem = keyProblem(key, curve);
  if (problem) throw new Error(`the ${kind.role} key ${problem}`);
  const n = options.scryptN ?? DEFAULT_SCRYPT_N;
  if (!isPowerOfTwo(n) || n > MAX_SCRYPT_N) throw new Error(`scrypt n must be a power of two from 2 to ${MAX_SCRYPT_N}`);
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const derived = deriveScrypt(Buffer.from(password, 'utf8'), salt, { n, r: SCRYPT_R, p: SCRYPT_P, dklen: 32 });
  const cipher = createCipheriv('aes-128-ctr', derived.subarray(0, 16), iv);
  const ciphertext = Buffer.concat([cipher.update(key), cipher.final()]);
  const address = curve ? addressOfKey(key, curve) : undefined;
  return {
    version: 3,
    id: randomUUID(),
    // The spec's form for an EVM address: lowercase hex without 0x.
    ...(address ? { address: curve === 'secp256k1' ? address.slice(2).toLowerCase() : address } : {}),
    crypto: {
      cipher: 'aes-128-ctr',
      cipherparams: { iv: iv.toString('hex') },
      ciphertext: ciphertext.toString('hex'),
      kdf: 'scrypt',
      kdfparams: { dklen: 32, n, r: SCRYPT_R, p: SCRYPT_P, salt: salt.toString('hex') },
      mac: macOf(derived, ciphertext).toString('hex'),
    },
    hashlock: { role: kind.role, ...(curve ? { curve } : {}) },
  };
}

/**
 * Writes a new key file (mode 0600, its directory created 0700 if missing); an existing file is never
 * overwritten. Returns what `readKeyFileInfo` would.
 */
export function writeKeyFile(file: string, key: Uint8Array, password: string, kind: KeyKind, options: EncryptOptions = {}): KeyFileInfo {
  const json = encryptKey(key, password, kind, options);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyFileError(file, 'exists already: not overwritten');
    throw new KeyFileError(file, `cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return infoOf(parseKeystore(json, file));
}

/** Reads what a key file says about its key (role, curve, address) without decrypting it. */
export function readKeyFileInfo(file: string): KeyFileInfo {
  return infoOf(parseKeystore(readJson(file), file));
}

/** Decrypts a key file: a KeyFileError for a wrong password or a damaged file. */
export function decryptKeyFile(file: string, password: string): DecryptedKey {
  return decryptKeystore(readJson(file), password, file);
}

/** Decrypts a keystore already parsed from JSON; `file` names it in errors. */
export function decryptKeystore(json: unknown, password: string, file: string): DecryptedKey {
  const store = parseKeystore(json, file);
  const secret = Buffer.from(password, 'utf8');
  const derived = store.kdf.name === 'scrypt' ? deriveScrypt(secret, store.kdf.salt, store.kdf) : pbkdf2Sync(secret, store.kdf.salt, store.kdf.c, store.kdf.dklen, 'sha256');
  if (!timingSafeEqual(macOf(derived, store.ciphertext), store.mac)) {
    throw new KeyFileError(file, 'wrong password, or the file was altered (its MAC does not match)');
  }
  const decipher = createDecipheriv('aes-128-ctr', derived.subarray(0, 16), store.iv);
  let key = Uint8Array.from(Buffer.concat([decipher.update(store.ciphertext), decipher.final()]));
  // Old geth wrote a secp256k1 key as a big-endian number without its leading zero bytes.
  if (store.curve === 'secp256k1' && key.length < 32) key = Uint8Array.from([...new Uint8Array(32 - key.length), ...key]);
  const problem = keyProblem(key, store.curve);
  if (problem) throw new KeyFileError(file, `the key it holds ${problem}`);
  if (store.curve && store.address !== undefined) {
    const actual = addressOfKey(key, store.curve);
    const same = store.curve === 'secp256k1' ? actual.toLowerCase() === store.address.toLowerCase() : actual === store.address;
    if (!same) throw new KeyFileError(file, 'address: does not match the key the file holds');
  }
  return { ...infoOf(store), key };
}

type Kdf =
  | { name: 'scrypt'; n: number; r: number; p: number; dklen: number; salt: Buffer }
  | { name: 'pbkdf2'; c: number; dklen: number; salt: Buffer };

interface Keystore {
  file: string;
  id: string | undefined;
  role: KeyRole | undefined;
  curve: KeyCurve | undefined;
  /** As the file gives it, in the display form (EVM: 0x-checksummed). */
  address: string | undefined;
  iv: Buffer;
  ciphertext: Buffer;
  mac: Buffer;
  kdf: Kdf;
}

const infoOf = (s: Keystore): KeyFileInfo => ({ file: s.file, id: s.id, role: s.role, curve: s.curve, address: s.address });

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KeyFileError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which may be a key: it is left out.
    throw new KeyFileError(file, 'is not a key file: not valid JSON');
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPowerOfTwo = (n: number) => Number.isInteger(n) && n >= 2 && (n & (n - 1)) === 0;
const isIntegerIn = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Checks every field of a version 3 keystore and returns them decoded; a KeyFileError names the first bad field. */
function parseKeystore(json: unknown, file: string): Keystore {
  const bad = (problem: string) => new KeyFileError(file, problem);
  if (!isObject(json)) throw bad('is not a key file: not a JSON object');
  if (json.version !== 3) throw bad(`version: ${typeof json.version === 'number' ? json.version : 'missing'}, only Web3 Secret Storage version 3 is read`);
  // Early geth wrote the field as "Crypto".
  const crypto = json.crypto ?? json.Crypto;
  if (!isObject(crypto)) throw bad('crypto: missing');
  const hex = (value: unknown, field: string, min: number, max = min): Buffer => {
    const text = typeof value === 'string' ? value.replace(/^0x/i, '') : undefined;
    const size = max === min ? `${min} bytes` : `${min} to ${max} bytes`;
    if (text === undefined || !/^([0-9a-fA-F]{2})+$/.test(text) || text.length / 2 < min || text.length / 2 > max) throw bad(`${field}: must be ${size} of hex`);
    return Buffer.from(text, 'hex');
  };
  if (crypto.cipher !== 'aes-128-ctr') throw bad(`crypto.cipher: ${typeof crypto.cipher === 'string' ? `${crypto.cipher} is not read` : 'missing'} (aes-128-ctr only)`);
  if (!isObject(crypto.cipherparams)) throw bad('crypto.cipherparams: missing');
  const iv = hex(crypto.cipherparams.iv, 'crypto.cipherparams.iv', 16);
  const mac = hex(crypto.mac, 'crypto.mac', 32);

  const { role, curve } = hashlockKind(json.hashlock, bad);
  // secp256k1 keys of old geth files may be shorter (leading zero bytes dropped); others are 32 bytes.
  const ciphertext = hex(crypto.ciphertext, 'crypto.ciphertext', curve === 'secp256k1' ? 1 : 32, 32);

  const params = crypto.kdfparams;
  if (!isObject(params)) throw bad('crypto.kdfparams: missing');
  if (!isIntegerIn(params.dklen, 32, 64)) throw bad('crypto.kdfparams.dklen: must be 32 to 64');
  const salt = hex(params.salt, 'crypto.kdfparams.salt', 16, 64);
  let kdf: Kdf;
  if (crypto.kdf === 'scrypt') {
    const { n, r, p } = params;
    if (!isIntegerIn(n, 2, MAX_SCRYPT_N) || !isPowerOfTwo(n)) throw bad(`crypto.kdfparams.n: must be a power of two from 2 to ${MAX_SCRYPT_N}`);
    if (!isIntegerIn(r, 1, 32)) throw bad('crypto.kdfparams.r: must be 1 to 32');
    if (!isIntegerIn(p, 1, 16)) throw bad('crypto.kdfparams.p: must be 1 to 16');
    if (128 * r * n > MAX_SCRYPT_MEMORY || 128 * r * n * p > MAX_SCRYPT_WORK) throw bad('crypto.kdfparams: n, r and p ask for more than 1 GiB or 2 GiB of work: refused');
    kdf = { name: 'scrypt', n, r, p, dklen: params.dklen, salt };
  } else if (crypto.kdf === 'pbkdf2') {
    if (params.prf !== 'hmac-sha256') throw bad('crypto.kdfparams.prf: must be hmac-sha256');
    if (!isIntegerIn(params.c, 1, MAX_PBKDF2_ROUNDS)) throw bad(`crypto.kdfparams.c: must be 1 to ${MAX_PBKDF2_ROUNDS}`);
    kdf = { name: 'pbkdf2', c: params.c, dklen: params.dklen, salt };
  } else {
    throw bad(`crypto.kdf: ${typeof crypto.kdf === 'string' ? `${crypto.kdf} is not read` : 'missing'} (scrypt or pbkdf2)`);
  }

  if (json.id !== undefined && typeof json.id !== 'string') throw bad('id: must be a string');
  return { file, id: json.id, role, curve, address: addressField(json.address, curve, bad), iv, ciphertext, mac, kdf };
}

/** The `hashlock` field: absent in another program's keystore, which holds a secp256k1 key of no role. */
function hashlockKind(value: unknown, bad: (problem: string) => KeyFileError): { role: KeyRole | undefined; curve: KeyCurve | undefined } {
  if (value === undefined) return { role: undefined, curve: 'secp256k1' };
  if (!isObject(value)) throw bad('hashlock: must be an object');
  const role = KEY_ROLES.find((r) => r === value.role);
  if (!role) throw bad(`hashlock.role: must be one of ${KEY_ROLES.join(', ')}`);
  if (role === 'secret') {
    if (value.curve !== undefined) throw bad('hashlock.curve: the secret key has none');
    return { role, curve: undefined };
  }
  const curve = KEY_CURVES.find((c) => c === value.curve);
  if (!curve) throw bad(`hashlock.curve: must be one of ${KEY_CURVES.join(', ')}`);
  return { role, curve };
}

function addressField(value: unknown, curve: KeyCurve | undefined, bad: (problem: string) => KeyFileError): string | undefined {
  if (value === undefined) return undefined;
  if (curve === undefined) throw bad('address: the secret key has none');
  if (typeof value !== 'string') throw bad('address: must be a string');
  if (curve === 'secp256k1') {
    const hex = value.replace(/^0x/i, '');
    if (!/^[0-9a-fA-F]{40}$/.test(hex)) throw bad('address: must be a 20-byte hex address');
    return getAddress(`0x${hex.toLowerCase()}`);
  }
  let bytes: Uint8Array | undefined;
  try {
    bytes = base58.decode(value);
  } catch {
    bytes = undefined;
  }
  if (bytes?.length !== 32) throw bad('address: must be a base58 ed25519 public key');
  return value;
}

function deriveScrypt(password: Buffer, salt: Buffer, params: { n: number; r: number; p: number; dklen: number }): Buffer {
  const { n, r, p, dklen } = params;
  // OpenSSL refuses n >= 2^(16 r) (RFC 7914's bound), which the spec's own test vector breaks (r = 1,
  // n = 2^18) and geth and ethers accept: such a file is derived in JavaScript instead.
  if (n >= 2 ** (16 * r)) return Buffer.from(scryptInJs(password, salt, { N: n, r, p, dkLen: dklen, maxmem: 128 * r * (n + p) + 1024 }));
  return scryptSync(password, salt, dklen, { N: n, r, p, maxmem: 128 * r * (n + p + 2) + 1024 * 1024 });
}

/** keccak256(derivedKey[16..32] ++ ciphertext), the spec's MAC. */
function macOf(derived: Buffer, ciphertext: Buffer): Buffer {
  return Buffer.from(keccak256(Buffer.concat([derived.subarray(16, 32), ciphertext])).slice(2), 'hex');
}
