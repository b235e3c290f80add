// `hashlock swap` with Solana against a running `hashlock dev` (one per file): SOL and USDC (SPL)
// both ways against the EVM chains and Litecoin. The client signs and broadcasts a SOL initiate (one
// signature, 5000 lamports), signs an SPL initiate for the relayer (gasless), and the service redeems
// a Solana destination to the user. Every printed balance is checked against the chains.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { BIN, envFor, runHashlock, startHashlockDev, type RunningDev } from '../helpers/hashlock-cli.ts';
import { address, createSolanaRpc, type Address, type Signature } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createPublicClient, erc20Abi, http, type Address as EvmAddress } from 'viem';
import { solanaProgramsForSuite } from '../helpers/solana.ts';
import { litecoindOrSkip } from '../helpers/litecoin.ts';
import { printed, change, quoted } from '../helpers/swap-output.ts';

/** What the Litecoin tests run, as a skip names it. */
const LITECOIN_SWAPS = 'the SOL <-> LTC swaps';

const LAMPORTS_PER_SIGNATURE = 5_000n;

const run = (args: string[], timeoutMs?: number) => runHashlock(args, envFor(dataDir), timeoutMs);

let dataDir: string;
let dev: RunningDev | undefined;
const devOutput = () => dev?.output() ?? '';
let rpc: ReturnType<typeof createSolanaRpc>;
let user: Address;
let evmUser: EvmAddress;
/** The key of an app without gasless actions, created before the devnet starts (its database is the devnet's). */
let plainAppKey: string;

before(async () => {
  if (!(await solanaProgramsForSuite())) return;
  dataDir = mkdtempSync(join(tmpdir(), 'hashlock-swap-solana-'));
    const created = spawnSync(process.execPath, [BIN, 'apps', 'create', '--name', 'no gasless'], { env: envFor(dataDir), encoding: 'utf8' });
  assert.equal(created.status, 0, created.stderr);
  plainAppKey = /^([0-9a-f]{64})$/m.exec(created.stdout)![1]!;
  dev = await startHashlockDev(dataDir);
  const devnet = readDevnetJson();
  assert.ok(devnet.chains.solana_localnet?.rpc_url, `clang-19 is installed but devnet.json has no solana_localnet:\n${devOutput()}`);
  rpc = createSolanaRpc(devnet.chains.solana_localnet.rpc_url);
  user = address(devnet.accounts.user.solana.address);
  evmUser = devnet.accounts.user.address;
});

after(async () => {
  await dev?.stop();
});

const readDevnetJson = () => JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8'));
const skipped = (t: TestContext) => {
  if (dev) return false;
  t.skip('clang-19 is not installed');
  return true;
};

// The chains, read directly.
const lamports = async () => (await rpc.getBalance(user, { commitment: 'confirmed' }).send()).value;
async function usdc(): Promise<bigint> {
  const mint = address(readDevnetJson().chains.solana_localnet.mints.usdc);
  const [ata] = await findAssociatedTokenPda({ owner: user, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { value } = await rpc.getAccountInfo(ata, { encoding: 'base64', commitment: 'confirmed' }).send();
  return value ? Buffer.from(value.data[0], 'base64').readBigUInt64LE(64) : 0n;
}
async function wbtc(chainKey: string): Promise<bigint> {
  const devnet = readDevnetJson();
  const assets = (await (await fetch(`${devnet.api_url}/v2/assets`, { headers: { 'service-app-id': devnet.app_key } })).json()) as {
    result: Array<{ id: string; token: { address: EvmAddress } }>;
  };
  const token = assets.result.find((a) => a.id === `${chainKey}:wbtc`)!.token.address;
  const client = createPublicClient({ transport: http(devnet.chains[chainKey].rpc_url) });
  return client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [evmUser] });
}
async function solanaTx(signature: string) {
  const tx = await rpc.getTransaction(signature as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
  assert.ok(tx?.meta, `no transaction ${signature}`);
  assert.equal(tx.meta.err, null);
  return tx;
}

async function swap(from: string, to: string, amount: bigint, timeoutSeconds = 120) {
  const res = await run(['swap', '--from', from, '--to', to, '--amount', amount.toString(), '--timeout', String(timeoutSeconds)]);
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  const statuses = [...res.stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  return res.stdout;
}

/** A SOL source: the printed initiate is on chain with one signature's fee, and the user paid the amount and that fee. */
async function assertSolSource(stdout: string, amount: bigint) {
  const m = /^\s*initiate: (\w{64,88}) \(fee (\d+) lamports: 1 signature\(s\) at 5000\)$/m.exec(stdout);
  assert.ok(m, stdout);
  const tx = await solanaTx(m[1]!);
  assert.equal(BigInt(tx.meta!.fee), LAMPORTS_PER_SIGNATURE);
  assert.equal(BigInt(m[2]!), LAMPORTS_PER_SIGNATURE);
  assert.equal(change(stdout, 'solana_localnet:sol'), -(amount + LAMPORTS_PER_SIGNATURE), 'the amount and the initiate fee; the rent came back');
  assert.match(stdout, /change solana_localnet:sol\s+-\d+ {2}\(the amount \+ the initiate fee 5000; the swap account's rent came back at the redeem\)/);
  assert.equal(printed(stdout, 'after', 'solana_localnet:sol'), await lamports(), 'the printed SOL balance is the chain\'s');
}

/** A Solana destination: the printed redeem paid the user exactly the quoted amount, and the user paid nothing. */
async function assertSolanaDestination(stdout: string, asset: string, unit: string) {
  const destination = quoted(stdout);
  const m = new RegExp(`^\\s*redeem \\(by the service\\): (\\w{64,88}): (\\d+) ${unit} to ${user} \\(the service paid its fee, 5000 lamports\\)$`, 'm').exec(stdout);
  assert.ok(m, stdout);
  assert.equal(BigInt(m[2]!), destination);
  const tx = await solanaTx(m[1]!);
  assert.notEqual(tx.transaction.message.accountKeys[0], user, 'the service paid for the redeem');
  assert.equal(change(stdout, asset), destination, 'the user received exactly the quoted amount');
}

test('hashlock swap: SOL -> arbitrum WBTC: the client signs and broadcasts versioned_tx', async (t) => {
  if (skipped(t)) return;
  const amount = 1_000_000_000n;
  const stdout = await swap('solana_localnet:sol', 'arbitrum_localnet:wbtc', amount);
  await assertSolSource(stdout, amount);
  assert.equal(change(stdout, 'arbitrum_localnet:wbtc'), quoted(stdout));
  assert.equal(printed(stdout, 'after', 'arbitrum_localnet:wbtc'), await wbtc('arbitrum_localnet'));
});

test('hashlock swap: arbitrum WBTC -> SOL: the service redeems the SOL to the user', async (t) => {
  if (skipped(t)) return;
  const amount = 200_000n;
  const stdout = await swap('arbitrum_localnet:wbtc', 'solana_localnet:sol', amount);
  assert.match(stdout, /initiate \(gasless, relayed\): 0x[0-9a-f]{64}/);
  assert.equal(change(stdout, 'arbitrum_localnet:wbtc'), -amount);
  await assertSolanaDestination(stdout, 'solana_localnet:sol', 'lamports');
  assert.equal(printed(stdout, 'after', 'solana_localnet:sol'), await lamports());
  assert.equal(printed(stdout, 'after', 'arbitrum_localnet:wbtc'), await wbtc('arbitrum_localnet'));
});

test('hashlock swap: USDC -> ethereum WBTC: the user signs versioned_tx_gasless, the relayer pays every fee', async (t) => {
  if (skipped(t)) return;
  const amount = 25_000_000n;
  const solBefore = await lamports();
  const stdout = await swap('solana_localnet:usdc', 'ethereum_localnet:wbtc', amount);
  const m = /^\s*initiate \(gasless, relayed\): (\w{64,88}) \(the relayer pays the fee\)$/m.exec(stdout);
  assert.ok(m, stdout);
  const tx = await solanaTx(m[1]!);
  assert.notEqual(tx.transaction.message.accountKeys[0], user, 'the relayer is the fee payer');
  assert.equal(change(stdout, 'solana_localnet:usdc'), -amount);
  assert.equal(await lamports(), solBefore, 'the user paid no SOL');
  assert.equal(change(stdout, 'ethereum_localnet:wbtc'), quoted(stdout));
  assert.equal(printed(stdout, 'after', 'solana_localnet:usdc'), await usdc());
  assert.equal(printed(stdout, 'after', 'ethereum_localnet:wbtc'), await wbtc('ethereum_localnet'));
});

test('hashlock swap: USDC -> ethereum WBTC for an app without gasless: the client broadcasts versioned_tx and pays its fee in SOL', async (t) => {
  if (skipped(t)) return;
  const plain = mkdtempSync(join(tmpdir(), 'hashlock-swap-plain-'));
  writeFileSync(join(plain, 'devnet.json'), JSON.stringify({ ...readDevnetJson(), app_key: plainAppKey }, null, 2));
  const amount = 25_000_000n;
  const solBefore = await lamports();
  const res = await run(['swap', '--from', 'solana_localnet:usdc', '--to', 'ethereum_localnet:wbtc', '--amount', amount.toString(), '--data-dir', plain]);
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  assert.doesNotMatch(res.stdout, /gasless/);
  const m = /^\s*initiate: (\w{64,88}) \(fee (\d+) lamports: 1 signature\(s\) at 5000\)$/m.exec(res.stdout);
  assert.ok(m, res.stdout);
  const tx = await solanaTx(m[1]!);
  assert.equal(tx.transaction.message.accountKeys[0], user, 'the user is the fee payer');
  assert.equal(BigInt(tx.meta!.fee), LAMPORTS_PER_SIGNATURE);
  assert.equal(change(res.stdout, 'solana_localnet:usdc'), -amount);
  assert.match(res.stdout, /change solana_localnet:usdc\s+-25000000 {2}\(the amount; the initiate's SOL is above\)/);
  // What the initiate cost the user in SOL, as printed and as the chain recorded it: its fee, the
  // swap account's rent (back at the solver's redeem) and, on the devnet's first SPL swap, the
  // program's identity and vault accounts.
  const cost = /^\s*the initiate cost the user (\d+) lamports of SOL: the fee 5000 and (\d+) of rent/m.exec(res.stdout);
  assert.ok(cost, res.stdout);
  const userIndex = tx.transaction.message.accountKeys.indexOf(user);
  assert.equal(BigInt(cost[1]!), BigInt(tx.meta!.preBalances[userIndex]!) - BigInt(tx.meta!.postBalances[userIndex]!));
  const order = (await (await fetch(`${readDevnetJson().api_url}/v2/orders/${/^Order (\w+) created$/m.exec(res.stdout)![1]}`, { headers: { 'service-app-id': plainAppKey } })).json()) as {
    result: { source_swap: { redeem_tx_hash: string } };
  };
  const redeem = await solanaTx(order.result.source_swap.redeem_tx_hash);
  const redeemIndex = redeem.transaction.message.accountKeys.indexOf(user);
  assert.ok(redeemIndex > 0, 'the solver\'s redeem returns the swap account\'s rent to the user');
  const rentBack = BigInt(redeem.meta!.postBalances[redeemIndex]!) - BigInt(redeem.meta!.preBalances[redeemIndex]!);
  assert.ok(rentBack > 0n);
  assert.equal(await lamports(), solBefore - BigInt(cost[1]!) + rentBack);
  assert.equal(printed(res.stdout, 'after', 'solana_localnet:usdc'), await usdc());
  assert.equal(change(res.stdout, 'ethereum_localnet:wbtc'), quoted(res.stdout));
});

test('hashlock swap: ethereum WBTC -> USDC: the service redeems the USDC to the user', async (t) => {
  if (skipped(t)) return;
  const amount = 100_000n;
  const solBefore = await lamports();
  const stdout = await swap('ethereum_localnet:wbtc', 'solana_localnet:usdc', amount);
  assert.equal(change(stdout, 'ethereum_localnet:wbtc'), -amount);
  await assertSolanaDestination(stdout, 'solana_localnet:usdc', 'base units of USDC');
  assert.equal(await lamports(), solBefore, 'the user paid no SOL');
  assert.equal(printed(stdout, 'after', 'solana_localnet:usdc'), await usdc());
});

test('hashlock swap: SOL -> LTC and LTC -> SOL', { timeout: 400_000 }, async (t) => {
  if (skipped(t) || !litecoindOrSkip(t, LITECOIN_SWAPS)) return;
  const sol = 1_000_000_000n;
  const toLtc = await swap('solana_localnet:sol', 'litecoin_localnet:ltc', sol, 150);
  await assertSolSource(toLtc, sol);
  const redeem = /^\s*redeem \(by the service, mined\): [0-9a-f]{64}: (\d+) litoshis to rltc1p\w+, the destination amount (\d+) less the redeem fee (\d+)$/m.exec(toLtc);
  assert.ok(redeem, toLtc);
  assert.equal(BigInt(redeem[2]!), quoted(toLtc));
  assert.equal(change(toLtc, 'litecoin_localnet:ltc'), BigInt(redeem[1]!));
  assert.equal(BigInt(redeem[1]!), quoted(toLtc) - BigInt(redeem[3]!));

  const ltc = 10_000_000n;
  const toSol = await swap('litecoin_localnet:ltc', 'solana_localnet:sol', ltc, 150);
  const fund = /^\s*fund: [0-9a-f]{64} \((\d+) litoshis to the HTLC rltc1p\w+, fee (\d+)\)$/m.exec(toSol);
  assert.ok(fund, toSol);
  assert.equal(change(toSol, 'litecoin_localnet:ltc'), -(ltc + BigInt(fund[2]!)));
  await assertSolanaDestination(toSol, 'solana_localnet:sol', 'lamports');
  assert.equal(printed(toSol, 'after', 'solana_localnet:sol'), await lamports());
});

test('hashlock swap: a Solana swap against a devnet without solana_localnet fails with one clear line', async (t) => {
  if (skipped(t)) return;
  // A copy of devnet.json as `hashlock dev` writes it when the Solana programs cannot be built.
  const devnet = readDevnetJson();
  delete devnet.chains.solana_localnet;
  delete devnet.accounts.user.solana;
  const noSolana = mkdtempSync(join(tmpdir(), 'hashlock-swap-nosol-'));
  writeFileSync(join(noSolana, 'devnet.json'), JSON.stringify(devnet, null, 2));
  for (const [flag, from, to] of [
    ['--from', 'solana_localnet:sol', 'arbitrum_localnet:wbtc'],
    ['--to', 'ethereum_localnet:wbtc', 'solana_localnet:sol'],
  ] as const) {
    const res = await run(['swap', '--from', from, '--to', to, '--amount', '100000000', '--data-dir', noSolana]);
    assert.equal(res.code, 1, res.stdout);
    assert.equal(res.stdout, '', 'nothing happens before the check');
    assert.match(res.stderr, new RegExp(`^swap failed: ${flag} solana_localnet:sol: solana_localnet is not running in the devnet \\(devnet.json has no solana_localnet\\)`));
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  }
  const unknown = await run(['swap', '--from', 'solana_localnet:bonk', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /--from solana_localnet:bonk: unknown asset; the service has .*solana_localnet:usdc/);
});
