// `hashlock swap` against a running `hashlock dev`: an ERC-20 swap (gasless initiate) and a native
// ether swap (the client broadcasts its initiate) both complete, and the printed balances agree.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');

function envFor(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  return env;
}

/** Runs a command to its end; resolves with its exit code and output. */
function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

let dataDir: string;
let dev: ChildProcess | undefined;
let devOutput = '';

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'hashlock-swap-'));
  const devnetPath = join(dataDir, 'devnet.json');
  dev = spawn(process.execPath, [BIN, 'dev'], { env: envFor(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout!.on('data', (d: Buffer) => (devOutput += d.toString()));
  dev.stderr!.on('data', (d: Buffer) => (devOutput += d.toString()));
  const deadline = Date.now() + 120_000;
  while (!(devOutput.includes('API key') && existsSync(devnetPath))) {
    if (dev.exitCode !== null) throw new Error(`hashlock dev exited early:\n${devOutput}`);
    if (Date.now() > deadline) throw new Error(`hashlock dev did not start:\n${devOutput}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(JSON.parse(readFileSync(devnetPath, 'utf8')).api_url);
});

after(async () => {
  if (!dev || dev.exitCode !== null) return;
  const exited = new Promise((r) => dev!.once('exit', r));
  dev.kill('SIGINT');
  await exited;
});

/** The balance the swap printed for `asset` in its "before" or "after" block. */
function printed(stdout: string, label: 'before' | 'after', asset: string): bigint {
  const m = new RegExp(`^\\s*${label}\\s+${asset.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+(\\d+)`, 'm').exec(stdout);
  assert.ok(m, `no "${label}" balance of ${asset} in:\n${stdout}`);
  return BigInt(m[1]!);
}

const quoted = (stdout: string): bigint => {
  const m = /^Quote: \d+ \S+ -> (\d+) /m.exec(stdout);
  assert.ok(m, stdout);
  return BigInt(m[1]!);
};

function assertCompleted(res: { code: number | null; stdout: string; stderr: string }, from: string, to: string, amount: bigint) {
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput}`);
  const statuses = [...res.stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  assert.ok(statuses.includes('created') || statuses.includes('initiated'), res.stdout);
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  assert.match(res.stdout, /^Completed in [\d.]+ s: .*completed$/m);
  const destination = quoted(res.stdout);
  assert.ok(destination > 0n && destination < amount);
  assert.equal(printed(res.stdout, 'after', to) - printed(res.stdout, 'before', to), destination, 'the user received exactly the quoted amount');
  assert.ok(printed(res.stdout, 'after', from) <= printed(res.stdout, 'before', from) - amount, 'the user paid the source amount');
}

test('hashlock swap: WBTC ethereum_localnet -> arbitrum_localnet with a gasless initiate completes', async () => {
  const amount = 100_000n;
  const res = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', amount.toString()], envFor(dataDir));
  assertCompleted(res, 'ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', amount);
  assert.match(res.stdout, /initiate \(gasless, relayed\): 0x[0-9a-f]{64}/);
  // An ERC-20 source costs the user exactly the amount in that token (gas is paid in ether).
  assert.equal(printed(res.stdout, 'before', 'ethereum_localnet:wbtc') - printed(res.stdout, 'after', 'ethereum_localnet:wbtc'), amount);
});

test('hashlock swap: native ether, the client broadcasts initiate_transaction itself, completes', async () => {
  const amount = 10_000_000_000_000_000n;
  const res = await run(['swap', '--from', 'ethereum_localnet:eth', '--to', 'arbitrum_localnet:eth', '--amount', amount.toString()], envFor(dataDir));
  assertCompleted(res, 'ethereum_localnet:eth', 'arbitrum_localnet:eth', amount);
  assert.match(res.stdout, /^\s*initiate: 0x[0-9a-f]{64}/m);
  assert.doesNotMatch(res.stdout, /gasless/);
});

test('hashlock swap: clear errors for an unknown asset and a missing devnet.json', async () => {
  const unknown = await run(['swap', '--from', 'ethereum_localnet:doge', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000'], envFor(dataDir));
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /--from ethereum_localnet:doge: unknown asset; the service has .*ethereum_localnet:wbtc/);

  const empty = mkdtempSync(join(tmpdir(), 'hashlock-swap-empty-'));
  const missing = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000', '--data-dir', empty], envFor(dataDir));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no devnet\.json in .*: run npm start first/);

  const badAmount = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', '1.5'], envFor(dataDir));
  assert.equal(badAmount.code, 1);
  assert.match(badAmount.stderr, /--amount 1\.5: must be a positive whole number of base units/);
});
