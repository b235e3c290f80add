// The service config's key_files: decrypted at load with the key password, each role's key from one
// place only, and every way it can fail one ConfigError naming the field, with no key or password in it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { generatePrivateKey } from 'viem/accounts';
import { ConfigError } from '../../src/config/schema-check.ts';
import { keyFromFile, loadServiceConfig, plaintextKeyVariables } from '../../src/config/service-config.ts';
import { encryptKey, writeKeyFile, type KeyKind } from '../../src/keys/key-file.ts';
import { loadSecretKey } from '../../src/orders/secret-box.ts';

const N = 1024;
const PASSWORD = 'a key password';
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const evmKey = () => Uint8Array.from(Buffer.from(generatePrivateKey().slice(2), 'hex'));

/** A directory with a password file and a key file per role (the deployer's under another password). */
function keyDir() {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-key-files-'));
  mkdirSync(join(dir, 'keys'));
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  const keys = { relayer: evmKey(), solver: Uint8Array.from(randomBytes(32)), feeSigner: evmKey(), secret: Uint8Array.from(randomBytes(32)), deployer: evmKey() };
  const write = (name: string, key: Uint8Array, kind: KeyKind, password = PASSWORD) => writeKeyFile(join(dir, 'keys', name), key, password, kind, { scryptN: N });
  write('relayer.json', keys.relayer, { role: 'relayer' });
  write('solver.json', keys.solver, { role: 'solver', curve: 'ed25519' });
  write('fee-signer.json', keys.feeSigner, { role: 'fee-signer' });
  write('secret.json', keys.secret, { role: 'secret' });
  write('deployer.json', keys.deployer, { role: 'deployer' }, 'the deployer password');
  const config = (keyFiles: Record<string, string>, extra: object = {}) => {
    const path = join(dir, `hashlock-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(path, JSON.stringify({ key_files: keyFiles, ...extra }));
    return path;
  };
  return { dir, passwordFile, keys, config };
}

const ALL_FILES = { relayer: 'keys/relayer.json', solver: 'keys/solver.json', fee_signer: 'keys/fee-signer.json', secret: 'keys/secret.json', deployer: 'keys/deployer.json' };

/** `fn` throws one ConfigError matching `message`, with none of `hidden` in it. */
function assertConfigError(fn: () => unknown, message: RegExp, hidden: string[]): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.match(err.message, message);
    for (const value of hidden) assert.ok(!err.message.toLowerCase().includes(value.toLowerCase()), `${value.slice(0, 6)}... is in: ${err.message}`);
    return true;
  });
}

test('key files named relative to the config are decrypted into its keys; keySources says where each key came from', () => {
  const { dir, passwordFile, keys, config } = keyDir();
  const loaded = loadServiceConfig(config(ALL_FILES), { HASHLOCK_KEY_PASSWORD_FILE: passwordFile });
  assert.deepEqual(loaded.keys, {
    relayer: `0x${hex(keys.relayer)}`,
    solver: `0x${hex(keys.solver)}`,
    feeSigner: `0x${hex(keys.feeSigner)}`,
    secret: keys.secret,
  });
  assert.deepEqual(loaded.keySources, { relayer: 'file', solver: 'file', 'fee-signer': 'file', deployer: 'file', secret: 'file' });
  // Only located: `hashlock deploy` decrypts it (here it has another password).
  assert.equal(loaded.keyFiles.deployer, join(dir, 'keys/deployer.json'));
  assert.deepEqual(keyFromFile('deployer', loaded.keyFiles.deployer, 'the deployer password'), keys.deployer);
  assert.deepEqual(plaintextKeyVariables(loaded), []);
  assert.deepEqual(loadSecretKey({}, join(dir, 'data'), true, loaded.keys.secret), loaded.keys.secret, 'the secret box takes the file key, with PostgreSQL too');

  const fromPassword = loadServiceConfig(config({ relayer: 'keys/relayer.json' }), { HASHLOCK_KEY_PASSWORD: PASSWORD, HASHLOCK_SOLVER_KEY: generatePrivateKey() });
  assert.deepEqual(fromPassword.keySources, { relayer: 'file', solver: 'env' });
  assert.deepEqual(plaintextKeyVariables(fromPassword), ['HASHLOCK_SOLVER_KEY']);
});

test('plaintext keys from the environment still load, each named for the warning `hashlock serve` prints (the deployer\'s aside)', () => {
  const { config } = keyDir();
  const secret = hex(randomBytes(32));
  const loaded = loadServiceConfig(config({}), {
    HASHLOCK_RELAYER_KEY: generatePrivateKey(),
    HASHLOCK_SOLVER_KEY: generatePrivateKey(),
    HASHLOCK_FEE_SIGNER_KEY: generatePrivateKey(),
    HASHLOCK_DEPLOYER_KEY: generatePrivateKey(),
    HASHLOCK_SECRET_KEY: secret,
  });
  assert.deepEqual(loaded.keySources, { relayer: 'env', solver: 'env', 'fee-signer': 'env', deployer: 'env', secret: 'env' });
  assert.equal(hex(loaded.keys.secret!), secret);
  assert.deepEqual(plaintextKeyVariables(loaded), ['HASHLOCK_RELAYER_KEY', 'HASHLOCK_SOLVER_KEY', 'HASHLOCK_FEE_SIGNER_KEY', 'HASHLOCK_SECRET_KEY']);
  assert.deepEqual(loadServiceConfig(config({}), {}).keySources, {}, 'no key anywhere');
  assertConfigError(() => loadServiceConfig(config({}), { HASHLOCK_SECRET_KEY: 'abc' }), /^HASHLOCK_SECRET_KEY: must be 64 hexadecimal characters$/, []);
});

test('a wrong password, a damaged or missing file, another role\'s file, no password or a key in both places: one ConfigError naming the field', () => {
  const { dir, passwordFile, keys, config } = keyDir();
  const env = { HASHLOCK_KEY_PASSWORD_FILE: passwordFile };
  const hidden = [PASSWORD, ...Object.values(keys).map(hex)];
  const file = (name: string) => join(dir, 'keys', name);

  assertConfigError(
    () => loadServiceConfig(config(ALL_FILES), { HASHLOCK_KEY_PASSWORD: 'not the password' }),
    new RegExp(`^key_files\\.relayer: ${file('relayer.json')}: wrong password, or the file was altered \\(its MAC does not match\\)$`),
    [...hidden, 'not the password'],
  );
  writeFileSync(file('damaged.json'), `{"crypto": "${hex(keys.solver)}`);
  assertConfigError(() => loadServiceConfig(config({ solver: 'keys/damaged.json' }), env), /^key_files\.solver: .*damaged\.json: is not a key file: not valid JSON$/, hidden);
  assertConfigError(() => loadServiceConfig(config({ solver: 'keys/nowhere.json' }), env), /^key_files\.solver: .*nowhere\.json: cannot be read \(ENOENT\)$/, hidden);
  assertConfigError(
    () => loadServiceConfig(config({ relayer: 'keys/solver.json' }), env),
    /^key_files\.relayer: .*solver\.json holds the solver key, not the relayer key$/,
    hidden,
  );
  assertConfigError(
    () => loadServiceConfig(config({ fee_signer: 'keys/relayer.json' }), {}),
    /^key_files: set HASHLOCK_KEY_PASSWORD or HASHLOCK_KEY_PASSWORD_FILE to the key files' password, never on the command line$/,
    hidden,
  );
  assertConfigError(
    () => loadServiceConfig(config({ relayer: 'keys/relayer.json' }), { ...env, HASHLOCK_KEY_PASSWORD: PASSWORD }),
    /HASHLOCK_KEY_PASSWORD and HASHLOCK_KEY_PASSWORD_FILE are both set: set one/,
    hidden,
  );
  writeFileSync(join(dir, 'empty-password'), '\n');
  assertConfigError(() => loadServiceConfig(config({ relayer: 'keys/relayer.json' }), { HASHLOCK_KEY_PASSWORD_FILE: join(dir, 'empty-password') }), /HASHLOCK_KEY_PASSWORD_FILE: .*empty-password is empty/, hidden);
  const relayerKey = generatePrivateKey();
  assertConfigError(
    () => loadServiceConfig(config({ relayer: 'keys/relayer.json' }), { ...env, HASHLOCK_RELAYER_KEY: relayerKey }),
    /^key_files\.relayer: HASHLOCK_RELAYER_KEY is set too: a key comes from one place \(unset HASHLOCK_RELAYER_KEY, or remove key_files\.relayer\)$/,
    [...hidden, relayerKey.slice(2)],
  );
  assertConfigError(() => loadServiceConfig(config({ deployer: 'keys/deployer.json' }), { HASHLOCK_DEPLOYER_KEY: generatePrivateKey() }), /^key_files\.deployer: HASHLOCK_DEPLOYER_KEY is set too/, hidden);
  assertConfigError(() => loadServiceConfig(config({ secret: 'keys/secret.json' }), { ...env, HASHLOCK_SECRET_KEY: hex(randomBytes(32)) }), /^key_files\.secret: HASHLOCK_SECRET_KEY is set too/, hidden);
  assertConfigError(() => loadServiceConfig(config({ solver: 'keys/solver.json', cashier: 'keys/relayer.json' }), env), /key_files\.cashier: is not a known field/, hidden);
});

test("another program's keystore (no hashlock role in it) serves a signing role, not the secret box", () => {
  const { dir, passwordFile, config } = keyDir();
  const key = evmKey();
  const foreign = encryptKey(key, PASSWORD, { role: 'relayer' }, { scryptN: N });
  delete foreign.hashlock;
  writeFileSync(join(dir, 'keys', 'geth.json'), JSON.stringify(foreign));
  const env = { HASHLOCK_KEY_PASSWORD_FILE: passwordFile };
  assert.equal(loadServiceConfig(config({ relayer: 'keys/geth.json' }), env).keys.relayer, `0x${hex(key)}`);
  assertConfigError(() => loadServiceConfig(config({ secret: 'keys/geth.json' }), env), /^key_files\.secret: .*geth\.json holds a key of no hashlock role, not the secret key$/, [PASSWORD, hex(key)]);
});
