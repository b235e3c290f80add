// `hashlock serve` as an operator runs it: a separate process on PostgreSQL, over two anvil chains
// mining every second, with gasless WBTC swaps from ethereum_localnet to arbitrum_localnet. The
// fault tests (the process killed, its database connections lost) share this world.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');
export const AMOUNT = 100_000n;

export interface Chain {
  node: AnvilNode;
  deployment: EvmDeployment;
  client: PublicClient;
}

export interface Balances {
  userEth: bigint;
  userArb: bigint;
  solverEth: bigint;
  solverArb: bigint;
}

/** A service process over the world's chains and database; `restart` after it was killed. */
export interface ServiceProcess {
  api: string;
  key: string;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Whether GET /health answers 200. */
  healthy(): Promise<boolean>;
  /** An API call with the app's key; throws on an error answer. */
  call(path: string, init?: { method: string; body: object }): Promise<any>;
  killed(): Promise<void>;
  restart(): Promise<void>;
}

export interface CreatedOrder {
  order_id: string;
  typed_data: Parameters<typeof signGaslessInitiate>[1];
}

export interface Mark {
  balances: Balances;
  blocks: Map<Chain, bigint>;
}

export interface ServiceWorld {
  eth: Chain;
  arb: Chain;
  /** With `proxied`, what stands between the service and each chain's node (the clients reach the nodes directly). */
  proxies: { eth?: TcpProxy; arb?: TcpProxy };
  dir: string;
  balances(): Promise<Balances>;
  /** Starts `hashlock serve` on `databaseUrl` (a fresh database: migrated here, with a gasless app). */
  startService(databaseUrl: string): Promise<ServiceProcess>;
  /** Creates `count` gasless WBTC swaps and relays their initiates; returns their order ids and the destination amount. */
  startSwaps(service: ServiceProcess, count: number): Promise<{ ids: string[]; destinationAmount: bigint }>;
  /** Creates `count` gasless WBTC swaps: the created orders (with their typed data) and the destination amount. */
  createSwaps(service: ServiceProcess, count: number): Promise<{ created: CreatedOrder[]; destinationAmount: bigint }>;
  /** The client's gasless initiate of each order (PATCH ?action=initiate); returns the answers' status codes. */
  initiate(service: ServiceProcess, created: CreatedOrder[]): Promise<number[]>;
  /** Polls every order until all are completed (fails with their statuses after `timeoutMs`). */
  waitCompleted(service: ServiceProcess, ids: string[], timeoutMs: number): Promise<void>;
  /** The chains' heights and the balances now, for `assertSettledOnce`. */
  mark(): Promise<Mark>;
  /** Exactly one initiate and one redeem per swap on each chain since `mark`, every amount paid once. */
  assertSettledOnce(mark: Mark, swaps: number, destinationAmount: bigint): Promise<void>;
  close(): Promise<void>;
}

/**
 * Two anvil chains with Garden's localnet contracts, mining a block a second, and the user's WBTC
 * approved. With `proxied`, the service reaches each node through a loopback proxy the test controls.
 */
export async function openServiceWorld(options: { proxied?: boolean } = {}): Promise<ServiceWorld> {
  const registry = loadRegistry(resolve(PACKAGE_ROOT, 'config/registry.localnet.json'));
  const [eth, arb] = (await Promise.all(
    ['ethereum_localnet', 'arbitrum_localnet'].map(async (key) => {
      const chain = registry.chain(key)!;
      const chainId = Number(evmChainId(chain));
      const node = await startAnvil({ chainId });
      const deployment = await deployLocalnet(chain, node.rpcUrl, chainId);
      await node.rpc('evm_setIntervalMining', [1]);
      return { node, deployment, client: createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0 }) };
    }),
  )) as [Chain, Chain];
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-service-'));
  const user = devAccount('user');
  const solver = devAccount('solver').address;
  const wallet = createWalletClient({ account: user, transport: http(eth.node.rpcUrl) });
  await eth.client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ chain: undefined, address: eth.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'approve', args: [eth.deployment.contracts.wbtcHtlc, maxUint256] }),
  });
  const wbtc = (c: Chain, who: Address) => c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
  const balances = async (): Promise<Balances> => ({
    userEth: await wbtc(eth, user.address),
    userArb: await wbtc(arb, user.address),
    solverEth: await wbtc(eth, solver),
    solverArb: await wbtc(arb, solver),
  });

  const proxies = options.proxied
    ? { eth: await startTcpProxy({ host: '127.0.0.1', port: eth.node.port }), arb: await startTcpProxy({ host: '127.0.0.1', port: arb.node.port }) }
    : {};
  const serviceUrl = (c: Chain) => (c === eth ? proxies.eth : proxies.arb)?.through(c.node.rpcUrl) ?? c.node.rpcUrl;
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
        [eth, arb].map((c) => [
          c.deployment.chain,
          { rpc_url: serviceUrl(c), ws_url: serviceUrl(c).replace(/^http/, 'ws'), relayer: devAccount('relayer').address, fee_claim: c.deployment.contracts.feeClaim },
        ]),
      ),
    }),
  );

  const startService = async (databaseUrl: string): Promise<ServiceProcess> => {
    const store = await openStore({ databaseUrl });
    await migrate(store.db);
    const { key } = await createApp(store.db, { name: 'service test', gasless: true });
    await store.close();
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HASHLOCK_DATA_DIR: dir,
      HASHLOCK_SECRET_KEY: randomBytes(32).toString('hex'),
      HASHLOCK_RELAYER_KEY: privateKeyOf(devAccount('relayer')),
      HASHLOCK_SOLVER_KEY: privateKeyOf(devAccount('solver')),
      HASHLOCK_FEE_SIGNER_KEY: privateKeyOf(devAccount('feeSigner')),
      PORT: String(port),
    };
    let output = '';
    const healthy = () => fetch(`${api}/health`).then((r) => r.ok, () => false);
    const spawnOne = async (): Promise<ChildProcess> => {
      const child = spawn(process.execPath, [BIN, 'serve', '-c', configPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      for (const end = Date.now() + 60_000; !(await healthy()); await new Promise((r) => setTimeout(r, 50))) {
        if (child.exitCode !== null || Date.now() > end) throw new Error(`the service did not start:\n${output}`);
      }
      return child;
    };
    const service: ServiceProcess = {
      api,
      key,
      child: await spawnOne(),
      output: () => output,
      healthy,
      call: async (path, init) => {
        const res = await fetch(`${api}${path}`, {
          method: init?.method ?? 'GET',
          headers: { 'service-app-id': key, 'content-type': 'application/json' },
          ...(init ? { body: JSON.stringify(init.body) } : {}),
        });
        const body = (await res.json()) as { result?: unknown; error?: string };
        if (!res.ok) throw new Error(`${path}: ${res.status} ${body.error}`);
        return body.result;
      },
      killed: async () => {
        if (service.child.exitCode !== null || service.child.signalCode !== null) return;
        const exited = new Promise((r) => service.child.once('exit', r));
        service.child.kill('SIGKILL');
        await exited;
      },
      restart: async () => {
        service.child = await spawnOne();
      },
    };
    return service;
  };

  const createSwaps = async (service: ServiceProcess, count: number) => {
    const quote = (await service.call(`/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${AMOUNT}`)) as Array<{ destination: { amount: string } }>;
    const destinationAmount = BigInt(quote[0]!.destination.amount);
    const created = await Promise.all(
      Array.from({ length: count }, () =>
        service.call('/v2/orders', {
          method: 'POST',
          body: {
            source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: AMOUNT.toString() },
            destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destinationAmount.toString() },
            nonce: randomBytes(10).toString('hex'),
          },
        }) as Promise<CreatedOrder>,
      ),
    );
    return { created, destinationAmount };
  };
  const initiate = (service: ServiceProcess, created: CreatedOrder[]) =>
    Promise.all(
      created.map(async (c) => {
        const res = await fetch(`${service.api}/v2/orders/${c.order_id}?action=initiate`, {
          method: 'PATCH',
          headers: { 'service-app-id': service.key, 'content-type': 'application/json' },
          body: JSON.stringify({ signature: await signGaslessInitiate(user, c.typed_data) }),
        });
        const body = (await res.json()) as { error?: string };
        if (res.status >= 400) throw new Error(`initiate ${c.order_id}: ${res.status} ${body.error}`);
        return res.status;
      }),
    );

  return {
    eth,
    arb,
    proxies,
    dir,
    balances,
    startService,
    createSwaps,
    initiate,
    startSwaps: async (service, count) => {
      const { created, destinationAmount } = await createSwaps(service, count);
      await initiate(service, created);
      return { ids: created.map((c) => c.order_id), destinationAmount };
    },
    waitCompleted: async (service, ids, timeoutMs) => {
      for (const end = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 500))) {
        const statuses = await Promise.all(ids.map(async (id) => ((await service.call(`/v2/orders/${id}`)) as { status: string }).status));
        if (statuses.every((s) => s === 'completed')) return;
        assert.ok(Date.now() < end, `not all settled: ${JSON.stringify(Object.fromEntries(ids.map((id, i) => [id, statuses[i]])))}\n${service.output()}`);
      }
    },
    // From the block after the newest: what is mined already counts in the balances read now.
    mark: async () => ({ balances: await balances(), blocks: new Map(await Promise.all([eth, arb].map(async (c) => [c, (await c.client.getBlockNumber()) + 1n] as const))) }),
    assertSettledOnce: async (mark, swaps, destinationAmount) => {
      const start = mark.balances;
      for (const c of [eth, arb]) {
        const logs = parseEventLogs({ abi: HTLC_EVENTS, logs: await c.client.getLogs({ address: c.deployment.contracts.wbtcHtlc, fromBlock: mark.blocks.get(c)!, toBlock: 'latest' }) });
        const count = (name: string) => logs.filter((e) => e.eventName === name).length;
        assert.equal(count('Initiated'), swaps, `${c.deployment.chain}: one initiate per swap`);
        assert.equal(count('Redeemed'), swaps, `${c.deployment.chain}: one redeem per swap`);
        assert.equal(count('Refunded'), 0, `${c.deployment.chain}: no refunds`);
        const perOrder = new Set(logs.map((e) => `${e.eventName}:${e.args.orderID}`));
        assert.equal(perOrder.size, logs.length, `${c.deployment.chain}: no order has two events of a kind`);
        assert.equal(await wbtc(c, c.deployment.contracts.wbtcHtlc), 0n, `${c.deployment.chain}: nothing left in the HTLC`);
      }
      const end = await balances();
      const total = BigInt(swaps);
      assert.equal(start.userEth - end.userEth, total * AMOUNT, 'the user paid each source once');
      assert.equal(end.userArb - start.userArb, total * destinationAmount, 'the user received each destination once');
      assert.equal(end.solverEth - start.solverEth, total * AMOUNT, 'the solver received each source once');
      assert.equal(start.solverArb - end.solverArb, total * destinationAmount, 'the solver paid each destination once');
    },
    close: async () => {
      await Promise.all(Object.values(proxies).map((p) => p.close()));
      await Promise.all([eth, arb].map((c) => c.node.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
