// A registered solver on the service's own wiring (`hashlock dev` on its two anvil chains): its funds
// are read on chain at its proven address, its answer beats the in-process solver's price in the quote
// and the order, and its liquidity is reserved; revoked, it leaves the liquidity read.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { revokeSolver } from '../../src/store/solver-registry.ts';
import { QuotingSolver, registerQuotingSolver } from '../helpers/quote-solver.ts';
import { evmOnlyConfig } from '../helpers/service-config.ts';

type Json = Record<string, any>;
const FROM = 'ethereum_localnet:wbtc';
const TO = 'arbitrum_localnet:wbtc';
const FUNDS = 5_000_000n;

let dataDir: string;
let dev: Dev;
let maker: QuotingSolver | undefined;
const account = privateKeyToAccount(generatePrivateKey());

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'hashlock-registered-solver-'));
  dev = await startDev(evmOnlyConfig(dataDir));
});
after(async () => {
  maker?.close();
  await dev?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const api = async (path: string, body?: object): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${dev.apiUrl}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { 'service-app-id': dev.appKey, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
};
const makerLiquidity = async () => (await api('/v2/liquidity')).body.result.find((s: Json) => s.solver_id === 'maker')?.liquidity.find((l: Json) => l.asset === TO);
const until = async (what: string, done: () => Promise<boolean>) => {
  for (const deadline = Date.now() + 30_000; !(await done()); await new Promise((r) => setTimeout(r, 250))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
};

test('a registered solver funded on chain wins the quote and the order with a better answer', async () => {
  const arb = dev.chains.find((c) => c.chain.key === 'arbitrum_localnet')!.record as { rpc_url: string; contracts: { wbtc: `0x${string}` } };
  const funder = createWalletClient({ account: devAccount('solver'), transport: http(arb.rpc_url) });
  const hash = await funder.writeContract({ chain: undefined, address: arb.contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [account.address, FUNDS] });
  await createPublicClient({ transport: http(arb.rpc_url) }).waitForTransactionReceipt({ hash });

  const key = await registerQuotingSolver(dev.service.store.db, dev.apiUrl, { id: 'maker', account, chains: ['ethereum_localnet', 'arbitrum_localnet'], pairs: [[FROM, TO]] });
  // 5 bips off, against the in-process solver's 30.
  maker = await QuotingSolver.connect(dev.apiUrl, key, (r) => ({ amount: (BigInt(r.source_amount!) * 9_995n) / 10_000n }));

  // The service reads the solver's funds at its proven address (every 5 s).
  await until("the maker's funds in the liquidity read", async () => (await makerLiquidity())?.balance === FUNDS.toString());
  const quote = await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=100000`);
  assert.equal(quote.status, 200, JSON.stringify(quote.body));
  assert.deepEqual(quote.body.result.map((q: Json) => q.destination.amount), ['99950', '99700']);
  assert.equal(quote.body.result[0].solver_id, 'maker');

  const user = devAccount('user');
  const created = await api('/v2/orders', {
    source: { asset: FROM, owner: user.address, amount: '100000' },
    destination: { asset: TO, owner: user.address, amount: '99950' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const order = (await api(`/v2/orders/${created.body.result.order_id}`)).body.result;
  assert.equal(order.solver_id, 'maker');
  assert.equal(order.source_swap.redeemer, account.address);
  assert.equal(order.destination_swap.initiator, account.address);
  const reserved = await makerLiquidity();
  assert.equal(reserved.virtual_balance, (FUNDS - 99_950n).toString(), 'the order holds its destination amount of the funds');

  assert.equal(await revokeSolver(dev.service.store.db, 'maker'), true);
  assert.equal(await makerLiquidity(), undefined, 'a revoked solver leaves the liquidity read');
  await until('the revoked stream to end', async () => maker!.closed);
});
