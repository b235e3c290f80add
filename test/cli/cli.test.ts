// `hashlock dev` runs and restarts (each test with a devnet of its own: it stops, restarts, kills or
// keys it), and the management commands on data directories of their own. The tests run at the same
// time: no two share a data directory, a chain or a port (test devnets take free ports).
// `hashlock apps create` against a running devnet is in test/cli/swap.test.ts, on its shared devnet.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { findLitecoind } from '../../src/localnet/bitcoin/litecoind.ts';
import { envFor, runHashlock, startHashlockDev, type Devnet } from '../helpers/hashlock-cli.ts';
import { waitFor } from '../helpers/wait.ts';

const chains = (devnet: { api_url: string; app_key: string }) =>
  fetch(`${devnet.api_url}/v3/chains`, { headers: { 'service-app-id': devnet.app_key } });
const getJson = async (devnet: Devnet, path: string, init?: RequestInit) =>
  (await fetch(`${devnet.api_url}${path}`, { ...init, headers: { 'service-app-id': devnet.app_key, 'content-type': 'application/json' } })).json() as Promise<Record<string, any>>;

/**
 * Reads an order until `done` holds for it (or fails after `seconds`). The limits are generous: the
 * tests of this file run at the same time, beside other files, on two cores; a passing test waits
 * only as long as the order takes.
 */
async function waitForOrder(devnet: Devnet, id: string, done: (order: Record<string, any>) => boolean, seconds = 90): Promise<Record<string, any>> {
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

// Each test has its own data directory, devnet and ports: they run at the same time.
describe('hashlock dev and the management commands', { concurrency: true }, () => {
  test('hashlock dev runs local chains and the whole service: a gasless swap completes, and a restart resumes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-dev-'));
    const first = await startHashlockDev(dataDir);
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
      let seen = await waitForOrder(first.devnet, order.result.order_id, (o) => !!o.source_swap?.initiate_tx_hash);
      assert.equal(seen.source_swap.initiate_tx_hash, initiated.result, 'the watcher recorded the relayed initiate');
      assert.equal(seen.source_swap.filled_amount, '100000');
      assert.ok(['initiate_detected', 'initiated', 'awaiting_redeem', 'redeem_detected', 'redeemed', 'completed'].includes(seen.status));

      // The service holds this order's secret: the running solver funds the destination, redeems it
      // for the user and then redeems its source. The user ends with exactly the destination amount.
      const arbRpc = first.devnet.chains.arbitrum_localnet!.rpc_url;
      const arb = createPublicClient({ transport: http(arbRpc) });
      const wbtcOnArb = first.devnet.chains.arbitrum_localnet!.contracts.wbtc as `0x${string}`;
      const balance = () => arb.readContract({ address: wbtcOnArb, abi: erc20Abi, functionName: 'balanceOf', args: [user.address] });
      const before = await balance();
      seen = await waitForOrder(first.devnet, order.result.order_id, (o) => o.status === 'completed', 120);
      assert.equal(seen.status, 'completed', JSON.stringify(seen));
      assert.match(seen.destination_swap.secret, /^[0-9a-f]{64}$/, 'the secret is public once redeemed');
      assert.equal((await balance()) - before, 99_700n);
    } finally {
      assert.equal(await first.stop(), 0, first.output());
    }
    assert.ok(existsSync(join(dataDir, 'pglite')), 'the embedded database lives in the data dir');

    const second = await startHashlockDev(dataDir);
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
        await waitFor(async () => {
          const read = await getJson(second.devnet, '/v2/liquidity');
          ltc = read.result[0].liquidity.find((l: { asset: string }) => l.asset === 'litecoin_localnet:ltc').balance;
          return ltc === '10000000000';
        }, 30_000, 'the solver\'s LTC liquidity').catch(() => undefined);
        assert.equal(ltc, '10000000000');
      }
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  test('a restart resumes an order in flight: initiated before the stop, settled after it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-inflight-'));
    // The first run's solver key is no configured solver's, so no solver runs: the order can only
    // wait at `initiated` until the restarted service, with the solver's key, takes it over.
    const first = await startHashlockDev(dataDir, { env: { HASHLOCK_SOLVER_KEY: generatePrivateKey() } });
    const devnet = first.devnet;
    let orderId: string;
    let before: bigint;
    try {
      before = await userArbWbtc(devnet);
      orderId = await initiateOwnSwap(devnet);
      const initiated = await waitForOrder(devnet, orderId, (o) => o.status === 'initiated');
      assert.equal(initiated.destination_swap.initiate_tx_hash, '', 'nobody funded the destination in the first run');
    } finally {
      assert.equal(await first.stop(), 0, first.output());
    }

    const second = await startHashlockDev(dataDir);
    try {
      const completed = await waitForOrder(second.devnet, orderId, (o) => o.status === 'completed');
      assert.match(completed.destination_swap.redeem_tx_hash, /^0x[0-9a-f]{64}$/);
      assert.match(completed.source_swap.redeem_tx_hash, /^0x[0-9a-f]{64}$/, 'the solver redeemed its source after the restart');
      assert.equal((await userArbWbtc(second.devnet)) - before, 99_700n, 'the user gained exactly the destination amount');
    } finally {
      assert.equal(await second.stop(), 0, second.output());
    }
  });

  test('Ctrl-C with a swap in flight: the service and its chains stop at once, exit 0, and the swap completes after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-ctrl-c-'));
    const first = await startHashlockDev(dataDir, { ownGroup: true });
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
      const t0 = Date.now();
      process.kill(-first.process.pid!, 'SIGINT');
      exit = await first.exited;
      stoppedIn = Date.now() - t0;
    }
    assert.equal(exit, 0, first.output());
    assert.ok(stoppedIn < 15_000, `stopped in ${stoppedIn} ms, not waiting on the dead nodes:\n${first.output()}`);
    assert.doesNotMatch(first.output(), /unhandled|Uncaught/i);

    const second = await startHashlockDev(dataDir);
    try {
      const completed = await waitForOrder(second.devnet, orderId, (o) => o.status === 'completed', 120);
      assert.match(completed.source_swap.redeem_tx_hash, /^0x[0-9a-f]{64}$/);
      assert.equal((await userArbWbtc(second.devnet)) - before, 99_700n, 'the user gained exactly the destination amount, once');
    } finally {
      assert.equal(await second.stop(), 0, second.output());
    }
  });

  test("hashlock apps: an app's own rate limit at creation, changed and given back later; bad limits and unknown apps refused", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-apps-limit-'));
    const run = (...args: string[]) => runHashlock(['apps', ...args], envFor(dataDir));
    const created = await run('create', '--name', 'Big Wallet', '--rate-limit', '20000/10s');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /created app [0-9a-f-]{36} "Big Wallet", limited to 20000 requests per 10 s/);
    const id = /created app ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
    const changed = await run('rate-limit', id, '500/1m');
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, new RegExp(`app ${id} is limited to 500 requests per 60 s`));
    const back = await run('rate-limit', id, 'default');
    assert.equal(back.code, 0, back.stderr);
    assert.match(back.stdout, /limited to the config's per-key limit/);
    for (const bad of ['lots', '0/10s', '10/0s', '10/2h', '10']) {
      const res = await run('rate-limit', id, bad);
      assert.notEqual(res.code, 0, `${bad} is refused`);
      assert.match(res.stderr, /<max>\/<window>, e.g. 10000\/10s/, res.stderr);
    }
    const unknown = await run('rate-limit', '00000000-0000-0000-0000-000000000000', '5/1s');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no app 00000000-0000-0000-0000-000000000000/);
  });

  test('hashlock solvers: register prints a key once, list shows the solver, revoke ends it; bad ids, taken ids and unknown solvers refused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-solvers-'));
    const run = (...args: string[]) => runHashlock(['solvers', ...args], envFor(dataDir));
    const registered = await run('register', '--id', 'maker-1', '--name', 'Maker One');
    assert.equal(registered.code, 0, registered.stderr);
    assert.match(registered.stdout, /registered solver maker-1 "Maker One"/);
    assert.match(registered.stdout, /^[0-9a-f]{64}$/m);
    assert.equal((await run('register', '--id', 'maker-1', '--name', 'again')).code, 1, 'a taken id');
    const bad = await run('register', '--id', 'Maker One', '--name', 'x');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--id.*a-z, 0-9/);
    assert.match((await run('list')).stdout, /^maker-1 "Maker One" \(registered; inactive\)$/m);
    assert.equal((await run('suspend', 'maker-1', '--reason', 'testing')).code, 0);
    assert.match((await run('list')).stdout, /^maker-1 "Maker One" \(registered; inactive; suspended: testing\)$/m);
    assert.equal((await run('restore', 'maker-1')).code, 0);
    assert.equal((await run('revoke', 'maker-1')).code, 0);
    assert.match((await run('list')).stdout, /^maker-1 "Maker One" \(registered; revoked\)$/m);
    assert.equal((await run('restore', 'nobody')).code, 1);
    const unknown = await run('revoke', 'nobody');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no registered solver nobody/);
  });

  test('a bad config file stops the command with one message naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashlock-badconfig-'));
    const config = join(dir, 'hashlock.json');
    writeFileSync(config, JSON.stringify({ registry: resolve(PACKAGE_ROOT, 'config/registry.localnet.json'), port: 'eighty' }));
    const run = await runHashlock(['serve', '--config', config], envFor(dir));
    assert.equal(run.code, 2);
    assert.match(run.stderr, /configuration error: .*hashlock\.json: port: must be integer/);
  });
});
