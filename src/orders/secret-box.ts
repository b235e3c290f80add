import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { x25519 } from '@noble/curves/ed25519.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/schema-check.ts';

/** Marks a box sealed to the workers' public key; a box without it is the older symmetric form. */
const SEALED = Buffer.from('S1');
const INFO = Buffer.from('hashlock sealed secret v1');

/**
 * Encrypts what the service holds for clients (secrets, per-order keys) at rest, sealed to the
 * workers' public key: the secret key (32 bytes) is an X25519 private key, and each box is AES-256-GCM
 * under a key agreed between a fresh ephemeral key and that public key (HKDF-SHA256). An instance that
 * only answers the API holds the public key alone (`SecretBox.sealingOnly`): it writes boxes it cannot
 * open. Sealed form: `S1`, the ephemeral public key (32), a 12-byte nonce, the 16-byte tag, the
 * ciphertext. Boxes of the older form (nonce, tag, ciphertext under the secret key itself) still open.
 * A tampered or foreign box fails to open.
 */
export class SecretBox {
  readonly publicKey: Uint8Array;
  private readonly key: Uint8Array | undefined;

  /** A box that seals and opens with the secret key `key`. */
  constructor(key: Uint8Array);
  /** A box that seals to `publicKey` and opens nothing (`sealingOnly`). */
  constructor(key: undefined, publicKey: Uint8Array);
  constructor(key: Uint8Array | undefined, publicKey?: Uint8Array) {
    if (key !== undefined && key.length !== 32) throw new Error('the secret key must be 32 bytes');
    if (publicKey !== undefined && publicKey.length !== 32) throw new Error('the sealing public key must be 32 bytes');
    this.key = key;
    this.publicKey = key ? x25519.getPublicKey(key) : publicKey!;
  }

  /** A box that seals to `publicKey` and opens nothing: an API-only instance's. */
  static sealingOnly(publicKey: Uint8Array): SecretBox {
    return new SecretBox(undefined, publicKey);
  }

  /** Whether this instance can open boxes (it holds the secret key). */
  get canOpen(): boolean {
    return this.key !== undefined;
  }

  seal(plaintext: Uint8Array): Uint8Array {
    const ephemeral = randomBytes(32);
    const ephemeralPublic = x25519.getPublicKey(ephemeral);
    const key = boxKey(x25519.getSharedSecret(ephemeral, this.publicKey), ephemeralPublic, this.publicKey);
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([SEALED, ephemeralPublic, nonce, cipher.getAuthTag(), body]);
  }

  open(sealed: Uint8Array): Uint8Array {
    if (!this.key) throw new Error('this instance holds no secret key: sealed secrets are opened by the worker instances');
    const bytes = Buffer.from(sealed);
    if (bytes.length >= 62 && bytes.subarray(0, 2).equals(SEALED)) {
      const ephemeralPublic = bytes.subarray(2, 34);
      try {
        return decrypt(boxKey(x25519.getSharedSecret(this.key, ephemeralPublic), ephemeralPublic, this.publicKey), bytes.subarray(34));
      } catch {
        // An older box whose random nonce happens to begin with the marker.
      }
    }
    return decrypt(this.key, bytes);
  }
}

const boxKey = (shared: Uint8Array, ephemeralPublic: Uint8Array, recipient: Uint8Array): Buffer =>
  Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephemeralPublic, recipient]), INFO, 32));

/** nonce (12) | tag (16) | ciphertext under `key`. */
function decrypt(key: Uint8Array, bytes: Buffer): Uint8Array {
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
}

/** HASHLOCK_SECRET_KEY's value (64 hex) as the key. */
export function parseSecretKey(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError('HASHLOCK_SECRET_KEY: must be 64 hexadecimal characters');
  return Buffer.from(hex, 'hex');
}

/**
 * The key is `configured` (the config's: its secret key file's, or HASHLOCK_SECRET_KEY's), else
 * HASHLOCK_SECRET_KEY (64 hex). Without either, an embedded-database service keeps
 * one in `<data dir>/secret.key` (created on first start, mode 0600) beside the data it protects.
 * A PostgreSQL deployment must set it: its instances have to share one key.
 */
export function loadSecretKey(env: NodeJS.ProcessEnv, dataDir: string, usesPostgres: boolean, configured?: Uint8Array): Uint8Array {
  if (configured) return configured;
  const fromEnv = env.HASHLOCK_SECRET_KEY;
  if (fromEnv) return parseSecretKey(fromEnv);
  if (usesPostgres) {
    throw new ConfigError('HASHLOCK_SECRET_KEY: is required with DATABASE_URL, or key_files.secret (every instance must share one key)');
  }
  const path = join(dataDir, 'secret.key');
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new ConfigError(`${path}: is not a 64-hex-character key`);
  return Buffer.from(text, 'hex');
}
