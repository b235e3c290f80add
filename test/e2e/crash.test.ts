// The service process killed outright, three times, while 20 gasless swaps settle: the chains and
// the database live on, the service restarts, and every swap settles with nobody paid twice.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, parseEventLogs, type Address, type PublicClient } from 'viem';
import { HTLC_EVENTS } from '../../src/chains/evm/htlc-events.ts';
import { DEV_CONFIG_PATH, PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { startAnvil, type AnvilNode } from '../../src/chains/evm/anvil.ts';
import { freePort } from '../../src/devnet/free-port.ts';
import { evmChainId } from '../../src/chains/evm/index.ts';
import { deployLocalnet, type EvmDeployment } from '../../src/chains/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../src/devnet/accounts.ts';
import { loadRegistry } from '../../src/chains/registry.ts';
import { createApp } from '../../src/store/apps.ts';
import { migrate, openStore } from '../../src/store/database.ts';
import { signGaslessInitiate } from '../helpers/gasless.ts';
import { createDatabase } from '../helpers/stores.ts';

const SWAPS = 20;
const KILLS = 3;
const AMOUNT = 100_000n;
const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');
const databaseUrl = process.env.DATABASE_URL;
const skip = databaseUrl ? false : process.env.CI ? false : 'DATABASE_URL is not set: the crash test runs on PostgreSQL';
if (skip) console.warn(`\n*** SKIPPING the service crash test: ${skip} ***\n`);

interface Chain {
  node: AnvilNode;
  deployment: EvmDeployment;
  client: PublicClient;
}

let chains: Chain[] = [];
let database: { url: string; drop: () => Promise<void> } | undefined;
let dir = '';

before(async () => {
  if (skip) return;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set: the crash test needs PostgreSQL');
  const registry = loadRegistry(resolve(PACKAGE_ROOT, 'config/registry.localnet.json'));
  chains = await Promise.all(
    ['ethereum_localnet', 'arbitrum_localnet'].map(async (key) => {
      const chain = registry.chain(key)!;
      const chainId = Number(evmChainId(chain));
      const node = await startAnvil({ chainId });
      const deployment = await deployLocalnet(chain, node.rpcUrl, chainId);
      await node.rpc('evm_setIntervalMining', [1]);
      return { node, deployment, client: createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0 }) };
    }),
  );
  database = await createDatabase(databaseUrl, 'hashlock_crash');
  dir = mkdtempSync(join(tmpdir(), 'hashlock-crash-'));
});

after(async () => {
  await Promise.all(chains.map((c) => c.node.stop()));
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the service killed with SIGKILL three times mid-settlement: every swap settles once', { skip, timeout: 300_000 }, async (t) => {
  const [eth, arb] = chains as [Chain, Chain];
  // The dev config, on these chains, with the registry where the package keeps it.
  const dev = JSON.parse(readFileSync(DEV_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
  const configPath = join(dir, 'hashlock.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      ...dev,
      registry: resolve(PACKAGE_ROOT, 'config/registry.localnet.json'),
      log_level: 'warn',
      rate_limit: false,
      chains: Object.fromEntries(
        chains.map((c) => [c.deployment.chain, { rpc_url: c.node.rpcUrl, ws_url: c.node.rpcUrl.replace(/^http/, 'ws'), relayer: devAccount('relayer').address, fee_claim: c.deployment.contracts.feeClaim }]),
      ),
    }),
  );
  const store = await openStore({ databaseUrl: database!.url });
  await migrate(store.db);
  const { key } = await createApp(store.db, { name: 'crash test', gasless: true });
  await store.close();

  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    DATABASE_URL: database!.url,
    HASHLOCK_DATA_DIR: dir,
    HASHLOCK_SECRET_KEY: randomBytes(32).toString('hex'),
    HASHLOCK_RELAYER_KEY: privateKeyOf(devAccount('relayer')),
    HASHLOCK_SOLVER_KEY: privateKeyOf(devAccount('solver')),
    HASHLOCK_FEE_SIGNER_KEY: privateKeyOf(devAccount('feeSigner')),
    PORT: String(port),
  };
  let output = '';
  const startService = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [BIN, 'serve', '-c', configPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    for (const end = Date.now() + 60_000; !(await answers()); await new Promise((r) => setTimeout(r, 50))) {
      if (child.exitCode !== null || Date.now() > end) throw new Error(`the service did not start:\n${output}`);
    }
    return child;
  };
  const answers = () => fetch(`${api}/health`).then((r) => r.ok, () => false);
  const call = async (path: string, init?: { method: string; body: object }): Promise<any> => {
    const res = await fetch(`${api}${path}`, {
      method: init?.method ?? 'GET',
      headers: { 'service-app-id': key, 'content-type': 'application/json' },
      ...(init ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = (await res.json()) as { result?: unknown; error?: string };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${body.error}`);
    return body.result;
  };

  const user = devAccount('user');
  const solver = devAccount('solver').address;
  const wallet = createWalletClient({ account: user, transport: http(eth.node.rpcUrl) });
  await eth.client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ chain: undefined, address: eth.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'approve', args: [eth.deployment.contracts.wbtcHtlc, maxUint256] }),
  });
  const wbtc = (c: Chain, who: Address) => c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
  const balances = async () => ({
    userEth: await wbtc(eth, user.address),
    userArb: await wbtc(arb, user.address),
    solverEth: await wbtc(eth, solver),
    solverArb: await wbtc(arb, solver),
  });
  const start = await balances();
  const fromEth = await eth.client.getBlockNumber();
  const fromArb = await arb.client.getBlockNumber();

  let service = await startService();
  try {
    const quote = (await call(`/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${AMOUNT}`)) as Array<{ destination: { amount: string } }>;
    const destinationAmount = BigInt(quote[0]!.destination.amount);
    const ids = await Promise.all(
      Array.from({ length: SWAPS }, async () => {
        const created = await call('/v2/orders', {
          method: 'POST',
          body: {
            source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: AMOUNT.toString() },
            destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destinationAmount.toString() },
            nonce: randomBytes(10).toString('hex'),
          },
        });
        await call(`/v2/orders/${created.order_id}?action=initiate`, { method: 'PATCH', body: { signature: await signGaslessInitiate(user, created.typed_data) } });
        return created.order_id as string;
      }),
    );

    // Killed at random moments of the settlement, each time restarted on the same database and
    // chains: the first soon after the initiates were accepted, each next one soon after the
    // restarted service made progress (it first waits out the dead instance's leases, about 3 s).
    const statusesNow = () => Promise.all(ids.map(async (id) => ((await call(`/v2/orders/${id}`)) as { status: string }).status));
    const settledAtKill: number[] = [];
    let seen = (await statusesNow()).join();
    for (let kill = 0; kill < KILLS; kill++) {
      if (kill > 0) {
        for (const end = Date.now() + 30_000; (await statusesNow()).join() === seen && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, randomInt(0, 1_000)));
      const read = await statusesNow();
      seen = read.join();
      settledAtKill.push(read.filter((s) => s === 'completed').length);
      const counts: Record<string, number> = {};
      for (const s of read) counts[s] = (counts[s] ?? 0) + 1;
      t.diagnostic(`kill ${kill + 1}: ${JSON.stringify(counts)}`);
      const exited = new Promise((r) => service.once('exit', r));
      service.kill('SIGKILL');
      await exited;
      service = await startService();
    }
    t.diagnostic(`swaps completed at each kill: ${settledAtKill.join(', ')} of ${SWAPS}`);
    assert.ok(settledAtKill[0]! < SWAPS, 'the first kill came while swaps were in flight');

    for (const end = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 500))) {
      const statuses = await statusesNow();
      if (statuses.every((s) => s === 'completed')) break;
      assert.ok(Date.now() < end, `not all settled: ${JSON.stringify(Object.fromEntries(ids.map((id, i) => [id, statuses[i]])))}\n${output}`);
    }

    // Exactly one initiate and one redeem per swap on each side; nothing left locked in either HTLC.
    const events = async (c: Chain, fromBlock: bigint) =>
      parseEventLogs({ abi: HTLC_EVENTS, logs: await c.client.getLogs({ address: c.deployment.contracts.wbtcHtlc, fromBlock, toBlock: 'latest' }) });
    for (const [c, from] of [[eth, fromEth], [arb, fromArb]] as const) {
      const logs = await events(c, from);
      const count = (name: string) => logs.filter((e) => e.eventName === name).length;
      assert.equal(count('Initiated'), SWAPS, `${c.deployment.chain}: one initiate per swap`);
      assert.equal(count('Redeemed'), SWAPS, `${c.deployment.chain}: one redeem per swap`);
      assert.equal(count('Refunded'), 0, `${c.deployment.chain}: no refunds`);
      const perOrder = new Set(logs.map((e) => `${e.eventName}:${e.args.orderID}`));
      assert.equal(perOrder.size, logs.length, `${c.deployment.chain}: no order has two events of a kind`);
      assert.equal(await wbtc(c, c.deployment.contracts.wbtcHtlc), 0n, `${c.deployment.chain}: nothing left in the HTLC`);
    }
    const end = await balances();
    const total = BigInt(SWAPS);
    assert.equal(start.userEth - end.userEth, total * AMOUNT, 'the user paid each source once');
    assert.equal(end.userArb - start.userArb, total * destinationAmount, 'the user received each destination once');
    assert.equal(end.solverEth - start.solverEth, total * AMOUNT, 'the solver received each source once');
    assert.equal(start.solverArb - end.solverArb, total * destinationAmount, 'the solver paid each destination once');
  } finally {
    service.kill('SIGKILL');
  }
});
