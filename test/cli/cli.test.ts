import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { findLitecoind } from '../../src/localnet/bitcoin/litecoind.ts';

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');

function envFor(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...extra };
  delete env.DATABASE_URL;
  return env;
}

/** Starts `hashlock dev` and resolves once devnet.json names the API. */
interface Devnet {
  api_url: string;
  app_key: string;
  chains: Record<string, { chain_id: number; rpc_url: string; contracts: Record<string, string> }>;
  accounts: { user: { address: string; private_key: string } };
}

async function startDev(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}, options: { ownGroup?: boolean } = {}): Promise<{ child: ChildProcess; devnet: Devnet; output: () => string }> {
  const devnetPath = join(dataDir, 'devnet.json');
  const before = existsSync(devnetPath) ? readFileSync(devnetPath, 'utf8') : '';
  // In its own process group, a signal can reach the service and its chain nodes at once, as Ctrl-C in a terminal does.
  const child = spawn(process.execPath, [BIN, 'dev'], { env: envFor(dataDir, extraEnv), stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownGroup ?? false });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`hashlock dev exited early:\n${output}`);
    if (output.includes('API key') && existsSync(devnetPath) && readFileSync(devnetPath, 'utf8') !== before) {
      return { child, devnet: JSON.parse(readFileSync(devnetPath, 'utf8')), output: () => output };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`hashlock dev did not start:\n${output}`);
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGINT');
  return exited;
}

const chains = (devnet: { api_url: string; app_key: string }) =>
  fetch(`${devnet.api_url}/v3/chains`, { headers: { 'service-app-id': devnet.app_key } });
const getJson = async (devnet: Devnet, path: string, init?: RequestInit) =>
  (await fetch(`${devnet.api_url}${path}`, { ...init, headers: { 'service-app-id': devnet.app_key, 'content-type': 'application/json' } })).json() as Promise<Record<string, any>>;

test('hashlock dev runs local chains and the whole service: a gasless swap completes, and a restart resumes', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-dev-'));
  const first = await startDev(dataDir);
  try {
    assert.match(first.devnet.app_key, /^[0-9a-f]{64}$/);
    assert.match(first.devnet.api_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(first.output().includes(first.devnet.app_key), 'the key is printed');
    assert.ok(first.output().includes(first.devnet.api_url), 'the URL is printed');
    const res = await chains(first.devnet);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { result: unknown[] }).result.length, 5, "ethereum, arbitrum, litecoin, solana and tron localnets");
    const denied = await fetch(`${first.devnet.api_url}/v3/chains`);
    assert.equal(denied.status, 401);

    const registry = JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'config/registry.localnet.json'), 'utf8')) as { chains: Array<{ chain: string; assets: Array<{ symbol: string; htlc: { address: string }; token: { address: string } }> }> };
    for (const chainKey of ['ethereum_localnet', 'arbitrum_localnet']) {
      const deployed = first.devnet.chains[chainKey]!;
      assert.match(deployed.rpc_url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const wbtc = registry.chains.find((c) => c.chain === chainKey)!.assets.find((a) => a.symbol === 'wbtc')!;
      assert.equal(deployed.contracts.wbtcHtlc, wbtc.htlc.address, 'deployed where the registry says');
      assert.equal(deployed.contracts.wbtc, wbtc.token.address);
    }
    assert.match(first.devnet.accounts.user.private_key, /^0x[0-9a-f]{64}$/);

    // The solver's real on-chain balance (100 test WBTC minted at deployment) is what liquidity shows.
    const liquidity = await getJson(first.devnet, '/v2/liquidity');
    const wbtcLiquidity = liquidity.result[0].liquidity.find((l: { asset: string }) => l.asset === 'arbitrum_localnet:wbtc');
    assert.equal(wbtcLiquidity.balance, '10000000000');

    const quote = await getJson(first.devnet, '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000');
    assert.equal(quote.result[0].destination.amount, '99700');
    const order = await getJson(first.devnet, '/v2/orders', {
      method: 'POST',
      body: JSON.stringify({
        source: { asset: 'ethereum_localnet:wbtc', owner: first.devnet.accounts.user.address, amount: '100000' },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: first.devnet.accounts.user.address, amount: '99700' },
      }),
    });
    assert.equal(order.status, 'Ok', JSON.stringify(order));
    assert.ok(order.result.typed_data, 'the devnet app is gasless');

    // Gasless initiate through the running service: approve on chain, sign the typed data, PATCH.
    const user = privateKeyToAccount(first.devnet.accounts.user.private_key as `0x${string}`);
    const rpc = first.devnet.chains.ethereum_localnet!.rpc_url;
    const chain = { id: 31337, name: 'ethereum_localnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpc] } } };
    const wallet = createWalletClient({ account: user, chain, transport: http(rpc) });
    const reader = createPublicClient({ chain, transport: http(rpc), pollingInterval: 100 });
    const approval = order.result.approval_transaction as { to: `0x${string}`; data: `0x${string}` };
    await reader.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: approval.to, data: approval.data }) });
    const td = order.result.typed_data as { domain: { chainId: `0x${string}`; verifyingContract: `0x${string}` }; message: Record<string, `0x${string}`> };
    const signature = await user.signTypedData({
      domain: { name: 'HTLC', version: '3', chainId: BigInt(td.domain.chainId), verifyingContract: td.domain.verifyingContract },
      types: { Initiate: [{ name: 'redeemer', type: 'address' }, { name: 'timelock', type: 'uint256' }, { name: 'amount', type: 'uint256' }, { name: 'secretHash', type: 'bytes32' }] },
      primaryType: 'Initiate',
      message: { redeemer: td.message.redeemer!, timelock: BigInt(td.message.timelock!), amount: BigInt(td.message.amount!), secretHash: td.message.secretHash! },
    });
    const initiated = await getJson(first.devnet, `/v2/orders/${order.result.order_id}?action=initiate`, { method: 'PATCH', body: JSON.stringify({ signature }) });
    assert.equal(initiated.status, 'Ok', JSON.stringify(initiated));
    assert.match(initiated.result, /^0x[0-9a-f]{64}$/);
    let seen: Record<string, any> | undefined;
    for (let i = 0; i < 100 && !seen?.source_swap?.initiate_tx_hash; i++) {
      await new Promise((r) => setTimeout(r, 200));
      seen = (await getJson(first.devnet, `/v2/orders/${order.result.order_id}`)).result;
    }
    assert.equal(seen!.source_swap.initiate_tx_hash, initiated.result, 'the watcher recorded the relayed initiate');
    assert.equal(seen!.source_swap.filled_amount, '100000');
    assert.ok(['initiate_detected', 'initiated', 'awaiting_redeem', 'redeem_detected', 'redeemed', 'completed'].includes(seen!.status));

    // The service holds this order's secret: the running solver funds the destination, redeems it
    // for the user and then redeems its source. The user ends with exactly the destination amount.
    const arbRpc = first.devnet.chains.arbitrum_localnet!.rpc_url;
    const arb = createPublicClient({ transport: http(arbRpc) });
    const wbtcOnArb = first.devnet.chains.arbitrum_localnet!.contracts.wbtc as `0x${string}`;
    const balance = () => arb.readContract({ address: wbtcOnArb, abi: erc20Abi, functionName: 'balanceOf', args: [user.address] });
    const before = await balance();
    for (let i = 0; i < 150 && seen!.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      seen = (await getJson(first.devnet, `/v2/orders/${order.result.order_id}`)).result;
    }
    assert.equal(seen!.status, 'completed', JSON.stringify(seen));
    assert.match(seen!.destination_swap.secret, /^[0-9a-f]{64}$/, 'the secret is public once redeemed');
    assert.equal((await balance()) - before, 99_700n);
  } finally {
    assert.equal(await stop(first.child), 0, first.output());
  }
  assert.ok(existsSync(join(dataDir, 'pglite')), 'the embedded database lives in the data dir');

  const second = await startDev(dataDir);
  try {
    assert.equal(second.devnet.app_key, first.devnet.app_key, 'the development app is created once');
    assert.equal((await chains(second.devnet)).status, 200);
    assert.deepEqual(second.devnet.chains.arbitrum_localnet!.contracts, first.devnet.chains.arbitrum_localnet!.contracts, 'the chains resume from their saved state');
    const liquidity = await getJson(second.devnet, '/v2/liquidity');
    // 100 WBTC minted less the 99,700 sats the solver paid in the first run's swap: the chain resumed.
    assert.equal(liquidity.result[0].liquidity.find((l: { asset: string }) => l.asset === 'arbitrum_localnet:wbtc').balance, '9999900300');
    if (findLitecoind()) {
      // The Litecoin chain resumed too, and the solver's wallet was funded once: 100 LTC, not 200.
      assert.ok(second.devnet.chains.litecoin_localnet?.rpc_url, 'the Litecoin node runs again');
      let ltc = '';
      for (const until = Date.now() + 15_000; ltc !== '10000000000' && Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
        const read = await getJson(second.devnet, '/v2/liquidity');
        ltc = read.result[0].liquidity.find((l: { asset: string }) => l.asset === 'litecoin_localnet:ltc').balance;
      }
      assert.equal(ltc, '10000000000');
    }
  } finally {
    assert.equal(await stop(second.child), 0);
  }
});

/** Reads an order until `done` holds for it (or fails after `seconds`). */
async function waitForOrder(devnet: Devnet, id: string, done: (order: Record<string, any>) => boolean, seconds = 30): Promise<Record<string, any>> {
  let order: Record<string, any> = {};
  for (const until = Date.now() + seconds * 1000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
    order = (await getJson(devnet, `/v2/orders/${id}`)).result;
    if (done(order)) return order;
  }
  assert.fail(`order ${id} stayed ${order.status}: ${JSON.stringify(order)}`);
}

const devUser = (devnet: Devnet) => privateKeyToAccount(devnet.accounts.user.private_key as `0x${string}`);

/** The test user's WBTC on arbitrum_localnet. */
const userArbWbtc = (devnet: Devnet) =>
  createPublicClient({ transport: http(devnet.chains.arbitrum_localnet!.rpc_url) }).readContract({
    address: devnet.chains.arbitrum_localnet!.contracts.wbtc as `0x${string}`,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [devUser(devnet).address],
  });

/** Creates a 100,000-sat WBTC order ethereum -> arbitrum whose approval and initiate the test user broadcasts itself; returns its id. */
async function initiateOwnSwap(devnet: Devnet): Promise<string> {
  const user = devUser(devnet);
  const eth = devnet.chains.ethereum_localnet!;
  const chain = { id: 31337, name: 'ethereum_localnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [eth.rpc_url] } } };
  const wallet = createWalletClient({ account: user, chain, transport: http(eth.rpc_url) });
  const reader = createPublicClient({ chain, transport: http(eth.rpc_url), pollingInterval: 100 });
  const order = await getJson(devnet, '/v2/orders', {
    method: 'POST',
    body: JSON.stringify({
      source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: '100000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: '99700' },
    }),
  });
  assert.equal(order.status, 'Ok', JSON.stringify(order));
  for (const tx of [order.result.approval_transaction, order.result.initiate_transaction] as Array<{ to: `0x${string}`; data: `0x${string}` }>) {
    const receipt = await reader.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: tx.to, data: tx.data }) });
    assert.equal(receipt.status, 'success');
  }
  return order.result.order_id as string;
}

test('a restart resumes an order in flight: initiated before the stop, settled after it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-inflight-'));
  // The first run's solver key is no configured solver's, so no solver runs: the order can only
  // wait at `initiated` until the restarted service, with the solver's key, takes it over.
  const first = await startDev(dataDir, { HASHLOCK_SOLVER_KEY: generatePrivateKey() });
  const devnet = first.devnet;
  let orderId: string;
  let before: bigint;
  try {
    before = await userArbWbtc(devnet);
    orderId = await initiateOwnSwap(devnet);
    const initiated = await waitForOrder(devnet, orderId, (o) => o.status === 'initiated');
    assert.equal(initiated.destination_swap.initiate_tx_hash, '', 'nobody funded the destination in the first run');
  } finally {
    assert.equal(await stop(first.child), 0, first.output());
  }

  const second = await startDev(dataDir);
  try {
    const completed = await waitForOrder(second.devnet, orderId, (o) => o.status === 'completed');
    assert.match(completed.destination_swap.redeem_tx_hash, /^0x[0-9a-f]{64}$/);
    assert.match(completed.source_swap.redeem_tx_hash, /^0x[0-9a-f]{64}$/, 'the solver redeemed its source after the restart');
    assert.equal((await userArbWbtc(second.devnet)) - before, 99_700n, 'the user gained exactly the destination amount');
  } finally {
    assert.equal(await stop(second.child), 0, second.output());
  }
});

test('Ctrl-C with a swap in flight: the service and its chains stop at once, exit 0, and the swap completes after a restart', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-ctrl-c-'));
  const first = await startDev(dataDir, {}, { ownGroup: true });
  const devnet = first.devnet;
  let orderId: string;
  let before: bigint;
  let stoppedIn: number;
  let exit: number | null;
  try {
    before = await userArbWbtc(devnet);
    orderId = await initiateOwnSwap(devnet);
    // The source is initiated: the solver is now sending the destination's funding and waits for it
    // to be mined while the signal kills the chain nodes under it.
    await waitForOrder(devnet, orderId, (o) => o.source_swap.initiate_tx_hash !== '');
  } finally {
    const exited = new Promise<number | null>((r) => first.child.once('exit', (code) => r(code)));
    const t0 = Date.now();
    process.kill(-first.child.pid!, 'SIGINT');
    exit = await exited;
    stoppedIn = Date.now() - t0;
  }
  assert.equal(exit, 0, first.output());
  assert.ok(stoppedIn < 15_000, `stopped in ${stoppedIn} ms, not waiting on the dead nodes:\n${first.output()}`);
  assert.doesNotMatch(first.output(), /unhandled|Uncaught/i);

  const second = await startDev(dataDir);
  try {
    const completed = await waitForOrder(second.devnet, orderId, (o) => o.status === 'completed', 60);
    assert.match(completed.source_swap.redeem_tx_hash, /^0x[0-9a-f]{64}$/);
    assert.equal((await userArbWbtc(second.devnet)) - before, 99_700n, 'the user gained exactly the destination amount, once');
  } finally {
    assert.equal(await stop(second.child), 0, second.output());
  }
});

test('hashlock apps create prints a working key once, and only its hash is stored', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-apps-'));
  const created = spawnSync(process.execPath, [BIN, 'apps', 'create', '--name', 'Acme Wallet', '--gasless'], {
    env: envFor(dataDir),
    encoding: 'utf8',
  });
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /created app [0-9a-f-]{36} "Acme Wallet" \(gasless\)/);
  const key = /^([0-9a-f]{64})$/m.exec(created.stdout)?.[1];
  assert.ok(key, created.stdout);

  const bad = spawnSync(process.execPath, [BIN, 'apps', 'create', '--name', 'x', '--slippage', 'lots'], { env: envFor(dataDir), encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--slippage.*a whole number of bips/);

  const dev = await startDev(dataDir);
  try {
    assert.notEqual(dev.devnet.app_key, key);
    const res = await chains({ api_url: dev.devnet.api_url, app_key: key });
    assert.equal(res.status, 200);
  } finally {
    await stop(dev.child);
  }
});

test("hashlock apps: an app's own rate limit at creation, changed and given back later; bad limits and unknown apps refused", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-apps-limit-'));
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'apps', ...args], { env: envFor(dataDir), encoding: 'utf8' });
  const created = run('create', '--name', 'Big Wallet', '--rate-limit', '20000/10s');
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /created app [0-9a-f-]{36} "Big Wallet", limited to 20000 requests per 10 s/);
  const id = /created app ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
  const changed = run('rate-limit', id, '500/1m');
  assert.equal(changed.status, 0, changed.stderr);
  assert.match(changed.stdout, new RegExp(`app ${id} is limited to 500 requests per 60 s`));
  const back = run('rate-limit', id, 'default');
  assert.equal(back.status, 0, back.stderr);
  assert.match(back.stdout, /limited to the config's per-key limit/);
  for (const bad of ['lots', '0/10s', '10/0s', '10/2h', '10']) {
    const res = run('rate-limit', id, bad);
    assert.notEqual(res.status, 0, `${bad} is refused`);
    assert.match(res.stderr, /<max>\/<window>, e.g. 10000\/10s/, res.stderr);
  }
  const unknown = run('rate-limit', '00000000-0000-0000-0000-000000000000', '5/1s');
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /no app 00000000-0000-0000-0000-000000000000/);
});

test('hashlock solvers: register prints a key once, list shows the solver, revoke ends it; bad ids, taken ids and unknown solvers refused', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-solvers-'));
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'solvers', ...args], { env: envFor(dataDir), encoding: 'utf8' });
  const registered = run('register', '--id', 'maker-1', '--name', 'Maker One');
  assert.equal(registered.status, 0, registered.stderr);
  assert.match(registered.stdout, /registered solver maker-1 "Maker One"/);
  assert.match(registered.stdout, /^[0-9a-f]{64}$/m);
  assert.equal(run('register', '--id', 'maker-1', '--name', 'again').status, 1, 'a taken id');
  const bad = run('register', '--id', 'Maker One', '--name', 'x');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--id.*a-z, 0-9/);
  assert.match(run('list').stdout, /^maker-1 "Maker One" \(registered; inactive\)$/m);
  assert.equal(run('suspend', 'maker-1', '--reason', 'testing').status, 0);
  assert.match(run('list').stdout, /^maker-1 "Maker One" \(registered; inactive; suspended: testing\)$/m);
  assert.equal(run('restore', 'maker-1').status, 0);
  assert.equal(run('revoke', 'maker-1').status, 0);
  assert.match(run('list').stdout, /^maker-1 "Maker One" \(registered; revoked\)$/m);
  assert.equal(run('restore', 'nobody').status, 1);
  const unknown = run('revoke', 'nobody');
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /no registered solver nobody/);
});

test('a bad config file stops the command with one message naming the field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-badconfig-'));
  const config = join(dir, 'hashlock.json');
  writeFileSync(config, JSON.stringify({ registry: resolve(PACKAGE_ROOT, 'config/registry.localnet.json'), port: 'eighty' }));
  const run = spawnSync(process.execPath, [BIN, 'serve', '--config', config], { env: envFor(dir), encoding: 'utf8' });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /configuration error: .*hashlock\.json: port: must be integer/);
});
