// `hashlock swap` with Tron USDT against a running `hashlock dev` (every local chain on, the Tron chain
// a block every 3 s): both ways against the EVM chains, Litecoin and Solana. A Tron source approves
// once (the user's own transaction, signed offline) and signs the TIP-712 initiate the relayer sends;
// a Tron destination is redeemed to the user by the service. Every printed balance is checked against
// the chains.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { TronApi } from '../../src/chains/tron/api.ts';
import { TronHtlcReader } from '../../src/chains/tron/htlc-reads.ts';
import { hex41 } from '../../src/chains/tron/transactions.ts';
import { envFor, runHashlock, startHashlockDev, type RunningDev } from '../helpers/hashlock-cli.ts';
import { solanaProgramsForSuite } from '../helpers/solana.ts';
import { litecoindOrSkip } from '../helpers/litecoin.ts';
import { printed, change, quoted } from '../helpers/swap-output.ts';

/** What the Litecoin tests run, as a skip names it. */
const LITECOIN_SWAPS = 'the USDT <-> LTC swaps';

const USDT = 'tron_localnet:usdt';

let dataDir: string;
let dev: RunningDev | undefined;
let tron: TronApi;
let reader: TronHtlcReader;
let solanaBuilt = false;

before(async () => {
  solanaBuilt = (await solanaProgramsForSuite()) !== undefined;
  dataDir = mkdtempSync(join(tmpdir(), 'hashlock-swap-tron-'));
  dev = await startHashlockDev(dataDir);
  const devnet = readDevnetJson();
  assert.ok(devnet.chains.tron_localnet?.api_url, `devnet.json has no tron_localnet:\n${dev.output()}`);
  tron = new TronApi(devnet.chains.tron_localnet.api_url);
  reader = new TronHtlcReader(tron);
});

after(async () => {
  await dev?.stop();
});

const readDevnetJson = () => JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8'));
const userTron = (): string => readDevnetJson().accounts.user.tron.address;

// The chains, read directly.
const usdt = () => reader.trc20Balance(readDevnetJson().chains.tron_localnet.contracts.usdt, userTron());
async function evmToken(assetId: string): Promise<bigint> {
  const devnet = readDevnetJson();
  const assets = (await (await fetch(`${devnet.api_url}/v2/assets`, { headers: { 'service-app-id': devnet.app_key } })).json()) as {
    result: Array<{ id: string; token: { address: Address } }>;
  };
  const token = assets.result.find((a) => a.id === assetId)!.token.address;
  const client = createPublicClient({ transport: http(devnet.chains[assetId.split(':')[0]!].rpc_url) });
  return client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [devnet.accounts.user.address] });
}

async function swap(from: string, to: string, amount: bigint, timeoutSeconds = 120): Promise<string> {
  const res = await runHashlock(['swap', '--from', from, '--to', to, '--amount', amount.toString(), '--timeout', String(timeoutSeconds)], envFor(dataDir), (timeoutSeconds + 30) * 1000);
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${dev?.output() ?? ''}`);
  const statuses = [...res.stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  return res.stdout;
}

/** A Tron source: the user's approval landed on the chain, the initiate was relayed, and the user paid exactly the amount in USDT. */
async function assertTronSource(stdout: string, amount: bigint) {
  const initiate = /^\s*initiate \(gasless, relayed\): ([0-9a-f]{64})$/m.exec(stdout);
  assert.ok(initiate, `no relayed initiate in:\n${stdout}`);
  const info = await tron.transactionInfo(initiate[1]!);
  assert.equal(info?.failed, false, `the relayed initiate ${initiate[1]} is on the chain and succeeded`);
  assert.equal(change(stdout, USDT), -amount, 'the user paid the amount in USDT');
  assert.equal(printed(stdout, 'after', USDT), await usdt(), "the printed USDT balance is the chain's");
}

/** A Tron destination: the user received the quoted USDT, redeemed by the service. */
async function assertTronDestination(stdout: string) {
  assert.equal(change(stdout, USDT), quoted(stdout), 'the user received the quoted USDT');
  assert.equal(printed(stdout, 'after', USDT), await usdt(), "the printed USDT balance is the chain's");
}

test('hashlock swap: Tron USDT -> arbitrum USDC: an approval, then the gasless TIP-712 initiate the relayer sends', async () => {
  const amount = 20_000_000n;
  const trxBefore = await tron.balanceSun(hex41(userTron()));
  const stdout = await swap(USDT, 'arbitrum_localnet:usdc', amount);
  const approval = /^\s*approval: ([0-9a-f]{64}) \(block \d+, fee (\d+) SUN\)$/m.exec(stdout);
  assert.ok(approval, `the first swap approves the HTLC:\n${stdout}`);
  const approvalFee = BigInt(approval[2]!);
  assert.equal((await tron.transactionInfo(approval[1]!))?.feeSun, approvalFee, "the printed fee is the chain's");
  assert.ok(approvalFee > 0n, 'an approval burns TRX for its energy');
  await assertTronSource(stdout, amount);
  assert.match(stdout, new RegExp(`change ${USDT}\\s+-${amount}  \\(the amount; the approval burnt ${approvalFee} SUN of TRX; the relayer paid the initiate's energy\\)`));
  assert.equal(change(stdout, 'arbitrum_localnet:usdc'), quoted(stdout));
  assert.equal(printed(stdout, 'after', 'arbitrum_localnet:usdc'), await evmToken('arbitrum_localnet:usdc'));
  const trxAfter = await tron.balanceSun(hex41(userTron()));
  assert.equal(trxAfter, trxBefore - approvalFee, 'the user burnt TRX for its approval only: the relayer paid the initiate');
});

test('hashlock swap: ethereum WBTC -> Tron USDT: a gasless WBTC initiate, the service redeems the USDT to the user', async () => {
  const amount = 100_000n; // 0.001 WBTC, about 95 USDT
  const stdout = await swap('ethereum_localnet:wbtc', USDT, amount);
  assert.equal(change(stdout, 'ethereum_localnet:wbtc'), -amount);
  assert.equal(printed(stdout, 'after', 'ethereum_localnet:wbtc'), await evmToken('ethereum_localnet:wbtc'));
  await assertTronDestination(stdout);
});

test('hashlock swap: Tron USDT -> LTC and LTC -> Tron USDT', { timeout: 400_000 }, async (t) => {
  if (!litecoindOrSkip(t, LITECOIN_SWAPS)) return;
  const amount = 10_000_000n;
  const toLtc = await swap(USDT, 'litecoin_localnet:ltc', amount, 150);
  await assertTronSource(toLtc, amount);
  const redeem = /^\s*redeem \(by the service, mined\): [0-9a-f]{64}: (\d+) litoshis to rltc1p\w+, the destination amount (\d+) less the redeem fee (\d+)$/m.exec(toLtc);
  assert.ok(redeem, `no LTC redeem line in:\n${toLtc}`);
  assert.equal(BigInt(redeem[2]!), quoted(toLtc));
  assert.equal(change(toLtc, 'litecoin_localnet:ltc'), BigInt(redeem[1]!));

  const ltc = 10_000_000n;
  const toUsdt = await swap('litecoin_localnet:ltc', USDT, ltc, 150);
  const fund = /^\s*fund: [0-9a-f]{64} \((\d+) litoshis to the HTLC rltc1p\w+, fee (\d+)\)$/m.exec(toUsdt);
  assert.ok(fund, `no LTC funding line in:\n${toUsdt}`);
  assert.equal(change(toUsdt, 'litecoin_localnet:ltc'), -(ltc + BigInt(fund[2]!)));
  await assertTronDestination(toUsdt);
});

test('hashlock swap: Tron USDT -> Solana USDC and SOL -> Tron USDT', { timeout: 300_000 }, async (t) => {
  if (!solanaBuilt) {
    t.skip('clang-19 is not installed');
    return;
  }
  const amount = 5_000_000n;
  const toUsdc = await swap(USDT, 'solana_localnet:usdc', amount);
  await assertTronSource(toUsdc, amount);
  assert.equal(change(toUsdc, 'solana_localnet:usdc'), quoted(toUsdc), 'the user received the quoted USDC');

  const sol = 100_000_000n;
  const toUsdt = await swap('solana_localnet:sol', USDT, sol);
  assert.ok(change(toUsdt, 'solana_localnet:sol') < -sol, 'the user paid the SOL amount and its initiate fee');
  await assertTronDestination(toUsdt);
});
