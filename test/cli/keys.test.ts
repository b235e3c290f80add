// `hashlock keys new|import|list` as an operator runs them, and `hashlock serve` and `hashlock deploy`
// reading the key files they write. No key or password ever goes on a command line or comes out in
// the output (safety rule 7).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { parseKeyInput } from '../../src/cli/keys.ts';
import { decryptKeyFile, writeKeyFile, type KeyKind } from '../../src/keys/key-file.ts';
import { BIN, envFor } from '../helpers/hashlock-cli.ts';
import { createDatabase } from '../helpers/stores.ts';
import { xOnlyPublicKeyOf } from '../../src/chains/bitcoin/address.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { LOCALNET_REGISTRY_PATH } from '../helpers/fixtures.ts';

const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
/** Key files for tests: a low scrypt n (a hidden option; `hashlock keys` warns of it). */
const LOW_N = ['--scrypt-n', '1024'];
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** A directory with the password in a file, and the environment of commands run there (no key variables of the test's own). */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-keys-'));
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  const env = envFor(join(dir, 'data'), { HASHLOCK_KEY_PASSWORD_FILE: passwordFile, LOG_LEVEL: 'info' });
  for (const name of ['HASHLOCK_KEY_PASSWORD', 'HASHLOCK_RELAYER_KEY', 'HASHLOCK_SOLVER_KEY', 'HASHLOCK_FEE_SIGNER_KEY', 'HASHLOCK_DEPLOYER_KEY', 'HASHLOCK_SECRET_KEY']) delete env[name];
  const run = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) => {
    const ran = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: options.env ?? env, input: options.input ?? '', encoding: 'utf8', timeout: 60_000 });
    return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr, output: ran.stdout + ran.stderr };
  };
  return { dir, passwordFile, env, run };
}

test('keys new and import write key files and print each address, never the key; list shows role, curve, address and file', () => {
  const { dir, passwordFile, env, run } = workspace();

  const relayer = run(['keys', 'new', '--role', 'relayer', '--out', 'keys/relayer.json', ...LOW_N]);
  assert.equal(relayer.code, 0, relayer.output);
  const [, relayerAddress, relayerFile] = /^relayer key \(secp256k1\) (0x[0-9a-fA-F]{40}) written to (.+)$/m.exec(relayer.stdout) ?? [];
  assert.equal(relayerFile, join(dir, 'keys/relayer.json'));
  const relayerKey = decryptKeyFile(relayerFile, PASSWORD);
  assert.equal(privateKeyToAddress(`0x${hex(relayerKey.key)}`), relayerAddress);
  assert.match(relayer.stderr, /warning: scrypt n 1024 is below the standard 262144: a key file for tests only/);

  const solver = run(['keys', 'new', '--role', 'solver', '--curve', 'ed25519', '--out', 'keys/solver.json', ...LOW_N]);
  assert.equal(solver.code, 0, solver.output);
  const solverAddress = /^solver key \(ed25519\) ([1-9A-HJ-NP-Za-km-z]{32,44}) written to /m.exec(solver.stdout)?.[1];
  const solverKey = decryptKeyFile(join(dir, 'keys/solver.json'), PASSWORD);
  assert.equal(base58.encode(ed25519.getPublicKey(solverKey.key)), solverAddress);

  const secret = run(['keys', 'new', '--role', 'secret', '--out', 'keys/secret.json', ...LOW_N]);
  assert.equal(secret.code, 0, secret.output);
  assert.match(secret.stdout, /^secret key written to .*secret\.json$/m);
  const secretKey = decryptKeyFile(join(dir, 'keys/secret.json'), PASSWORD).key;

  // The key on stdin, the password from --password-file (the environment has none).
  const feeSigner = generatePrivateKey();
  const noPasswordEnv = { ...env };
  delete noPasswordEnv.HASHLOCK_KEY_PASSWORD_FILE;
  const imported = run(['keys', 'import', '--role', 'fee-signer', '--out', 'keys/fee-signer.json', '--password-file', passwordFile, ...LOW_N], { input: `${feeSigner}\n`, env: noPasswordEnv });
  assert.equal(imported.code, 0, imported.output);
  assert.match(imported.stdout, new RegExp(`^fee-signer key \\(secp256k1\\) ${privateKeyToAddress(feeSigner)} written to `, 'm'));
  assert.equal(`0x${hex(decryptKeyFile(join(dir, 'keys/fee-signer.json'), PASSWORD).key)}`, feeSigner);

  // A Solana keypair file (seed, then public key) as solana-keygen writes it.
  const seed = randomBytes(32);
  const keypair = JSON.stringify([...seed, ...ed25519.getPublicKey(seed)]);
  const deployer = run(['keys', 'import', '--role', 'deployer', '--curve', 'ed25519', '--out', 'keys/deployer.json', ...LOW_N], { input: keypair });
  assert.equal(deployer.code, 0, deployer.output);
  assert.deepEqual(Buffer.from(decryptKeyFile(join(dir, 'keys/deployer.json'), PASSWORD).key), seed);

  const keys = [relayerKey.key, solverKey.key, secretKey, Buffer.from(feeSigner.slice(2), 'hex'), seed].map(hex);
  for (const ran of [relayer, solver, secret, imported, deployer]) {
    for (const key of keys) assert.ok(!ran.output.toLowerCase().includes(key), 'no key in the output');
    assert.ok(!ran.output.includes(PASSWORD), 'no password in the output');
  }

  // Refusals: bad input (not echoed), a curve for the secret, an existing file, no password, a password on the command line.
  const notHex = `${feeSigner.slice(2, 60)}zz`;
  const bad = run(['keys', 'import', '--role', 'relayer', '--out', 'keys/bad.json', ...LOW_N], { input: notHex });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error: stdin: expected a 32-byte key in hex \(64 hex characters, 0x optional\)$/m);
  assert.ok(!bad.output.includes(notHex), 'the input is not echoed');
  const curved = run(['keys', 'new', '--role', 'secret', '--curve', 'ed25519', '--out', 'keys/bad.json', ...LOW_N]);
  assert.equal(curved.code, 1);
  assert.match(curved.stderr, /--curve: the secret role is a symmetric key, with no curve/);
  const again = run(['keys', 'new', '--role', 'relayer', '--out', 'keys/relayer.json', ...LOW_N]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^error: .*relayer\.json: exists already: not overwritten$/m);
  assert.deepEqual(decryptKeyFile(relayerFile, PASSWORD).key, relayerKey.key, 'the key file is unchanged');
  const noPassword = run(['keys', 'new', '--role', 'relayer', '--out', 'keys/other.json', ...LOW_N], { env: noPasswordEnv });
  assert.equal(noPassword.code, 2);
  assert.match(
    noPassword.stderr,
    /^configuration error: hashlock keys: set HASHLOCK_KEY_PASSWORD or HASHLOCK_KEY_PASSWORD_FILE \(or --password-file\) to the key files' password, never on the command line$/m,
  );
  const onArgv = run(['keys', 'new', '--role', 'relayer', '--out', 'keys/other.json', '--password', PASSWORD]);
  assert.equal(onArgv.code, 1);
  assert.match(onArgv.stderr, /unknown option '--password'/);
  assert.ok(!onArgv.output.includes(PASSWORD));

  // The list: a config file beside the keys is not a key file; a damaged key file is named on stderr.
  writeFileSync(join(dir, 'keys', 'hashlock.json'), JSON.stringify({ registry: 'registry.json' }));
  const listed = run(['keys', 'list', 'keys']);
  assert.equal(listed.code, 0, listed.output);
  assert.deepEqual(
    listed.stdout.trim().split('\n').map((line) => line.split(/\s+/)),
    [
      ['ROLE', 'CURVE', 'ADDRESS', 'FILE'],
      ['deployer', 'ed25519', base58.encode(ed25519.getPublicKey(seed)), 'keys/deployer.json'],
      ['fee-signer', 'secp256k1', privateKeyToAddress(feeSigner), 'keys/fee-signer.json'],
      ['relayer', 'secp256k1', relayerAddress, 'keys/relayer.json'],
      ['secret', '-', '-', 'keys/secret.json'],
      ['solver', 'ed25519', solverAddress, 'keys/solver.json'],
    ],
  );
  for (const key of keys) assert.ok(!listed.output.toLowerCase().includes(key), 'no key in the list');
  const damaged = JSON.parse(readFileSync(relayerFile, 'utf8'));
  damaged.crypto.mac = 'ab';
  writeFileSync(join(dir, 'keys', 'damaged.json'), JSON.stringify(damaged));
  const withDamaged = run(['keys', 'list', 'keys/solver.json', 'keys']);
  assert.equal(withDamaged.code, 1);
  assert.match(withDamaged.stderr, /^keys\/damaged\.json: crypto\.mac: must be 32 bytes of hex$/m);
  assert.equal(withDamaged.stdout.trim().split('\n').length, 1 + 1 + 5, 'the header, the solver named, the directory\'s five good files');
});

/** Writes a service config with key files (relative paths) over the localnet registry, no chains and no solver. */
function serviceConfig(dir: string, keyFiles: Record<string, string>): string {
  const path = join(dir, 'hashlock.json');
  writeFileSync(path, JSON.stringify({ registry: LOCALNET_REGISTRY_PATH, solvers: [], strategies: [], key_files: keyFiles }));
  return path;
}

/** Starts `hashlock serve`, waits for it to listen, runs `work` against it, stops it with SIGINT; resolves with its exit code and output. */
async function serve(args: string[], env: NodeJS.ProcessEnv, work: (api: string) => Promise<void>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const listening = new Promise<string | undefined>((done) => {
    const read = (d: Buffer) => {
      output += d.toString();
      const url = /Hashlock API listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) done(url);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then(() => done(undefined));
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  try {
    const api = await listening;
    if (api) {
      await work(api);
      child.kill('SIGINT');
    }
    return { code: await exited, output };
  } finally {
    clearTimeout(timer);
  }
}

test('hashlock serve reads the key files, warns once per plaintext key it uses, and prints no key, password or secret (rule 7)', async () => {
  const { dir, env } = workspace();
  const kinds: KeyKind[] = [{ role: 'relayer' }, { role: 'solver', curve: 'ed25519' }, { role: 'secret' }];
  const fileKeys = kinds.map((kind) => {
    const key = kind.role === 'secret' ? randomBytes(32) : Buffer.from(generatePrivateKey().slice(2), 'hex');
    writeKeyFile(join(dir, 'keys', `${kind.role}.json`), key, PASSWORD, kind, { scryptN: 1024 });
    return hex(key);
  });
  const config = serviceConfig(dir, { relayer: 'keys/relayer.json', solver: 'keys/solver.json', secret: 'keys/secret.json' });
  const feeSigner = generatePrivateKey();
  const served = await serve(['-c', config], { ...env, HASHLOCK_FEE_SIGNER_KEY: feeSigner }, async (api) => {
    assert.equal((await fetch(`${api}/health`)).status, 200);
    assert.equal((await fetch(`${api}/v2/orders/nothing`, { headers: { 'service-app-id': 'no such key' } })).status, 401);
  });
  assert.equal(served.code, 0, served.output);
  const warnings = served.output.split('\n').filter((line) => /warning/i.test(line));
  assert.deepEqual(warnings, ['warning: HASHLOCK_FEE_SIGNER_KEY is a plaintext key in the environment: use key_files (hashlock keys import)']);
  const output = served.output.toLowerCase();
  for (const value of [...fileKeys, feeSigner.slice(2), PASSWORD.toLowerCase()]) assert.ok(!output.includes(value), `rule 7: ${value.slice(0, 6)}... is in the output`);

  // A wrong password stops the start with one line naming the field and the file, and no password.
  const wrong = await serve(['-c', config], { ...env, HASHLOCK_KEY_PASSWORD_FILE: undefined, HASHLOCK_KEY_PASSWORD: 'not the password' }, () => {
    throw new Error('the service started');
  });
  assert.equal(wrong.code, 2, wrong.output);
  assert.equal(wrong.output.trim(), `configuration error: key_files.relayer: ${join(dir, 'keys/relayer.json')}: wrong password, or the file was altered (its MAC does not match)`);

  // A damaged key file likewise.
  mkdirSync(join(dir, 'other'));
  writeFileSync(join(dir, 'other', 'solver.json'), `${fileKeys[1]}\n`);
  const damaged = await serve(['-c', serviceConfig(join(dir, 'other'), { solver: 'solver.json' })], env, () => {
    throw new Error('the service started');
  });
  assert.equal(damaged.code, 2, damaged.output);
  assert.equal(damaged.output.trim(), `configuration error: key_files.solver: ${join(dir, 'other', 'solver.json')}: is not a key file: not valid JSON`);
});

test('hashlock deploy takes the deployer key from key_files.deployer', () => {
  const { dir, env, run } = workspace();
  writeKeyFile(join(dir, 'keys', 'deployer.json'), Buffer.from(generatePrivateKey().slice(2), 'hex'), PASSWORD, { role: 'deployer' }, { scryptN: 1024 });
  const config = serviceConfig(dir, { deployer: 'keys/deployer.json' });
  // With the right password the key is read, and the deploy goes on to the chain's access (none here).
  const deploy = run(['deploy', '-c', config, '--chain', 'ethereum_localnet']);
  assert.equal(deploy.code, 2, deploy.output);
  assert.match(deploy.stderr, /^configuration error: --chain: the config has no chains\.ethereum_localnet entry/m);
  const wrong = run(['deploy', '-c', config, '--chain', 'ethereum_localnet'], { env: { ...env, HASHLOCK_KEY_PASSWORD_FILE: undefined, HASHLOCK_KEY_PASSWORD: 'wrong' } });
  assert.equal(wrong.code, 2, wrong.output);
  assert.match(wrong.stderr, /^configuration error: key_files\.deployer: .*deployer\.json: wrong password/m);
  const both = run(['deploy', '-c', config, '--chain', 'ethereum_localnet'], { env: { ...env, HASHLOCK_DEPLOYER_KEY: generatePrivateKey() } });
  assert.equal(both.code, 2, both.output);
  assert.match(both.stderr, /^configuration error: key_files\.deployer: HASHLOCK_DEPLOYER_KEY is set too/m);
});

test('what keys import reads: hex with or without 0x, a Solana keypair array for ed25519; anything else refused without quoting it', () => {
  const key = generatePrivateKey();
  assert.equal(hex(parseKeyInput(` ${key}\n`, 'secp256k1') as Uint8Array), key.slice(2));
  assert.equal(hex(parseKeyInput(key.slice(2).toUpperCase(), 'secp256k1') as Uint8Array), key.slice(2));
  const seed = randomBytes(32);
  const pair = [...seed, ...ed25519.getPublicKey(seed)];
  assert.deepEqual(Buffer.from(parseKeyInput(JSON.stringify(pair), 'ed25519') as Uint8Array), seed);
  const refusals: Array<[string, Parameters<typeof parseKeyInput>[1], RegExp]> = [
    [JSON.stringify(pair), 'secp256k1', /a JSON array is a Solana keypair: import it with --curve ed25519/],
    [JSON.stringify([...seed, ...randomBytes(32)]), 'ed25519', /the keypair's public key is not its seed's/],
    [JSON.stringify(pair.slice(1)), 'ed25519', /a Solana keypair is a JSON array of 64 bytes/],
    [`[${key}`, 'ed25519', /not a valid JSON array/],
    [key.slice(0, 64), 'secp256k1', /expected a 32-byte key in hex/],
    [`0x${'f'.repeat(64)}`, 'secp256k1', /not a valid secp256k1 private key/],
    ['', undefined, /expected a 32-byte key in hex/],
  ];
  for (const [input, curve, problem] of refusals) {
    const answer = parseKeyInput(input, curve);
    assert.equal(typeof answer, 'string', input);
    assert.match(answer as string, problem);
    assert.ok(!(answer as string).includes(key.slice(2, 20)), 'the input is not quoted');
  }
});

test('hashlock preflight: a key file with the wrong password stops it with its own message; a database behind its migrations fails it (exit 1) until hashlock migrate', async (t) => {
  const { dir, env, run } = workspace();
  writeKeyFile(join(dir, 'keys', 'relayer.json'), Buffer.from(generatePrivateKey().slice(2), 'hex'), PASSWORD, { role: 'relayer' }, { scryptN: 1024 });
  // A registry whose chains are all inactive: only the database is checked.
  const registry = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as { chains: Array<{ is_active: boolean; assets: Array<{ is_active: boolean }> }> };
  for (const chain of registry.chains) {
    chain.is_active = false;
    for (const asset of chain.assets) asset.is_active = false;
  }
  const registryPath = join(dir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify(registry));
  const config = join(dir, 'preflight.json');
  writeFileSync(config, JSON.stringify({ registry: registryPath, key_files: { relayer: 'keys/relayer.json' } }));

  const wrong = run(['preflight', '-c', config], { env: { ...env, HASHLOCK_KEY_PASSWORD_FILE: undefined, HASHLOCK_KEY_PASSWORD: 'not the password' } });
  assert.equal(wrong.code, 2, wrong.output);
  assert.match(wrong.stderr, /^configuration error: key_files\.relayer: .*relayer\.json: wrong password, or the file was altered/m);
  assert.ok(!wrong.output.includes('not the password'));

  if (!process.env.DATABASE_URL) {
    assert.ok(!process.env.CI, 'CI sets DATABASE_URL');
    t.diagnostic('no DATABASE_URL: the migrations half needs PostgreSQL');
    return;
  }
  const database = await createDatabase(process.env.DATABASE_URL, 'preflight_cli', { migrated: false });
  t.after(() => database.drop());
  const onDatabase = { env: { ...env, DATABASE_URL: database.url } };
  const behind = run(['preflight', '-c', config, '--json'], onDatabase);
  assert.equal(behind.code, 1, behind.output);
  const report = JSON.parse(behind.stdout) as { ok: boolean; checks: Array<{ check: string; status: string; detail: string }> };
  assert.equal(report.ok, false);
  assert.deepEqual(
    report.checks.filter((c) => c.status === 'error').map((c) => c.check),
    ['migrations'],
  );
  assert.match(report.checks.find((c) => c.check === 'migrations')!.detail, /migration\(s\) behind \(0001_initial…\): run hashlock migrate/);
  const migrated = run(['migrate', '-c', config], onDatabase);
  assert.equal(migrated.code, 0, migrated.output);
  assert.match(migrated.stdout, /^applied \d+ migration\(s\): 0001_initial, /);
  const green = run(['preflight', '-c', config], onDatabase);
  assert.equal(green.code, 0, green.output);
  assert.match(green.stdout, /preflight passed/);
});

test("keys addresses: the solver key's party and funding address on each chain of the registry, read from its key file", () => {
  const { dir, run } = workspace();
  const key = generatePrivateKey();
  writeKeyFile(join(dir, 'keys', 'solver.json'), Buffer.from(key.slice(2), 'hex'), PASSWORD, { role: 'solver' }, { scryptN: 1024 });
  const shown = run(['keys', 'addresses', '-c', serviceConfig(dir, { solver: 'keys/solver.json' }), '--role', 'solver']);
  assert.equal(shown.code, 0, shown.output);
  const rows = new Map(shown.stdout.trim().split('\n').slice(1).map((line) => { const [chain, party, fund] = line.split(/\s+/); return [chain!, { party, fund }]; }));
  assert.deepEqual(rows.get('ethereum_localnet'), { party: privateKeyToAddress(key), fund: privateKeyToAddress(key) });
  assert.deepEqual(rows.get('litecoin_localnet'), {
    party: xOnlyPublicKeyOf(Buffer.from(key.slice(2), 'hex')),
    fund: walletAddress(Buffer.from(key.slice(2), 'hex'), 'litecoin_regtest'),
  });
  assert.ok(rows.has('solana_localnet') && rows.has('tron_localnet'));
  assert.ok(!shown.output.includes(key.slice(2)), 'rule 7: never the key');
});
