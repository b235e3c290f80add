import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/schema-check.ts';

/**
 * Encrypts what the service holds for clients (secrets, per-order keys) at rest with AES-256-GCM.
 * Sealed form: 12-byte nonce, 16-byte tag, ciphertext. A tampered or foreign box fails to open.
 */
export class SecretBox {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  }

  seal(plaintext: Uint8Array): Uint8Array {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), body]);
  }

  open(sealed: Uint8Array): Uint8Array {
    const bytes = Buffer.from(sealed);
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
  }
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
