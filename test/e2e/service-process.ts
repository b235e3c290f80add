// `hashlock serve` as an operator runs it: a separate process on PostgreSQL, over two anvil chains
// mining every second, with gasless WBTC swaps from ethereum_localnet to arbitrum_localnet (or any
// route of the dev config). The fault tests (the process killed, its database connections lost, its
// chains' nodes away or slow) share this world; it may also run Litecoin regtest and the local Solana
// chain as `hashlock dev` does (service-chains.ts). Its registry is the test registry
// (test/helpers/test-registry.ts: Litecoin mines every 2 s), with a test's own times over it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, parseEventLogs, type Address, type PublicClient } from 'viem';
import { HTLC_EVENTS } from '../../src/chains/solidity-htlc/htlc-events.ts';
import { DEV_CONFIG_PATH, PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { freePort } from '../../src/localnet/free-port.ts';
import { evmChainId } from '../../src/chains/evm/index.ts';
import { deployLocalnet, type EvmDeployment } from '../../src/localnet/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { loadRegistry, type Registry } from '../../src/chains/registry.ts';
import { writeKeyFile } from '../../src/keys/key-file.ts';
import { createApp } from '../../src/store/apps.ts';
import { migrate, openStore } from '../../src/store/database.ts';
import { signGaslessInitiate } from '../helpers/gasless.ts';
import { createDatabase } from '../helpers/stores.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { writeTestRegistry, type RegistryTimes } from '../helpers/test-registry.ts';
import { startLitecoinSide, startSolanaSide, startTronSide, type LitecoinSide, type ServiceChain, type SolanaSide, type TronSide } from './service-chains.ts';

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
  /** An API call with the app's key: its status code and body, whatever they are. */
  request(method: string, path: string, body?: object): Promise<{ status: number; body: any }>;
  /** The service's jobs (its relayer's and its solver's), oldest first. */
  jobs(): Promise<Job[]>;
  /** The service's jobs that failed, with why. */
  failedJobs(): Promise<Array<Pick<Job, 'chain' | 'idempotency_key' | 'last_error'>>>;
  killed(): Promise<void>;
  restart(): Promise<void>;
  /** The keys the process was given (its secret box's, the relayer's, the solver's, the fee signer's), hex. */
  keys: string[];
  /** With `keyFiles`: the password of its key files. */
  keyPassword?: string;
}

/** A job of the service's queue, as a test reads it. */
export interface Job {
  chain: string;
  order_id: string | null;
  action: string;
  idempotency_key: string;
  status: string;
  last_error: string;
  created_at: Date;
  updated_at: Date;
  /** When its (first) transaction was signed; null while it has none. */
  signed_at: Date | null;
}

export interface CreatedOrder {
  order_id: string;
  typed_data: Parameters<typeof signGaslessInitiate>[1];
  /** A Bitcoin-family source: the HTLC address the client pays. */
  to?: string;
  /** A Solana source: the initiate the client signs and sends. */
  versioned_tx?: string;
}

/** Swaps of one route: the assets, their owners and the source amount; `secretHash` when the client keeps the secret. */
export interface SwapRoute {
  from: string;
  to: string;
  fromOwner: string;
  toOwner: string;
  amount: bigint;
  secretHash?: string;
  /** The solver the client asks for (`solver_id`). */
  solverId?: string;
}

export interface Mark {
  balances: Balances;
  blocks: Map<Chain, bigint>;
  /** The solver whose balances it holds (the service's own by default). */
  solver?: Address;
}

export interface ServiceWorld {
  /** The test registry the service runs on (`WorldOptions.registryTimes` over the localnet one's). */
  registry: Registry;
  /** Its file, for other processes on these chains (a `hashlock solver`). */
  registryPath: string;
  eth: Chain;
  arb: Chain;
  /** With `litecoin`: litecoin_localnet, a Litecoin Core regtest node. */
  ltc?: LitecoinSide;
  /** With `solana`: solana_localnet, the local Solana chain. */
  sol?: SolanaSide;
  /** With `tron`: tron_localnet, the local Tron chain. */
  tron?: TronSide;
  /** With `proxied`, what stands between the service and each chain's node (the clients reach the nodes directly). */
  proxies: { eth?: TcpProxy; arb?: TcpProxy; ltc?: TcpProxy; sol?: TcpProxy; tron?: TcpProxy };
  dir: string;
  /** The user's WBTC and a solver's (the service's own by default) on both chains. */
  balances(solver?: Address): Promise<Balances>;
  /** Starts `hashlock serve` on `databaseUrl` (a fresh database: migrated here, with a gasless app). */
  startService(databaseUrl: string): Promise<ServiceProcess>;
  /** Creates `count` gasless WBTC swaps and relays their initiates; returns their order ids and the destination amount. */
  startSwaps(service: ServiceProcess, count: number): Promise<{ ids: string[]; destinationAmount: bigint }>;
  /**
   * Creates `count` swaps of `route` (gasless WBTC from ethereum_localnet to arbitrum_localnet by
   * default, the user's on both): the created orders (with their typed data) and the destination amount.
   */
  createSwaps(service: ServiceProcess, count: number, route?: SwapRoute): Promise<{ created: CreatedOrder[]; destinationAmount: bigint }>;
  /** The client's gasless initiate of each order (PATCH ?action=initiate); returns the answers' status codes. */
  initiate(service: ServiceProcess, created: CreatedOrder[]): Promise<number[]>;
  /** The orders' statuses now. */
  statuses(service: ServiceProcess, ids: string[]): Promise<string[]>;
  /** Polls until every order has `status` (fails with their statuses after `timeoutMs`). */
  waitStatus(service: ServiceProcess, ids: string[], status: string, timeoutMs: number): Promise<void>;
  /** Polls every order until all are completed (fails with their statuses after `timeoutMs`). */
  waitCompleted(service: ServiceProcess, ids: string[], timeoutMs: number): Promise<void>;
  /**
   * Orders whose EVM source on `source` was never answered: its timelock is run out (its blocks mined
   * at once), then the client asks for each refund (PATCH ?action=refund), and every order is refunded.
   */
  refundAfterTimelock(service: ServiceProcess, ids: string[], source: Chain): Promise<void>;
  /** The names of the WBTC HTLC's events on `c` from block `fromBlock`, by order id (hex, no 0x). */
  htlcEvents(c: Chain, fromBlock: bigint): Promise<Map<string, string[]>>;
  /** The chains' heights and the balances now (with `solver`'s), for `assertSettledOnce`. */
  mark(solver?: Address): Promise<Mark>;
  /** Exactly one initiate and one redeem per swap on each chain since `mark`, every amount paid once. */
  assertSettledOnce(mark: Mark, swaps: number, destinationAmount: bigint): Promise<void>;
  /**
   * Rule 7 over everything the process printed: none of its keys, its key files' password, the user's
   * key, or the secrets the swaps since `mark` revealed on chain (the service held them before) appears
   * in its output; with key files, no warning of a plaintext key either.
   */
  assertNothingSecretPrinted(service: ServiceProcess, mark: Mark): Promise<void>;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** A loopback proxy between the service and each node. */
  proxied?: boolean;
  litecoin?: boolean;
  solana?: boolean;
  tron?: boolean;
  /** Settings of the service config over the dev config's. */
  config?: Record<string, unknown>;
  /** Block times and timelocks by chain over the test registry's (`writeTestRegistry`). */
  registryTimes?: RegistryTimes;
  /**
   * The service's keys in key files (key_files, with HASHLOCK_KEY_PASSWORD_FILE) rather than plaintext
   * in its environment; one secret-box key for every service of the world.
   */
  keyFiles?: boolean;
}

/**
 * Why a test file of this world cannot run here, said loudly: DATABASE_URL unset outside CI (in CI
 * the file runs and fails without it); false when it can run.
 */
export function skipWithoutPostgres(what: string): string | false {
  if (process.env.DATABASE_URL || process.env.CI) return false;
  const why = `DATABASE_URL is not set: ${what} run on PostgreSQL`;
  console.warn(`\n*** SKIPPING ${what}: ${why} ***\n`);
  return why;
}

/**
 * For a test file: the world, a fresh database on DATABASE_URL (named after `database`) and the
 * service on it, opened in `before` unless `skip`, and all closed in `after`.
 */
export function serviceForSuite(options: WorldOptions & { database: string }, skip: string | false): { world?: ServiceWorld; service?: ServiceProcess } {
  const suite: { world?: ServiceWorld; service?: ServiceProcess } = {};
  let database: { url: string; drop: () => Promise<void> } | undefined;
  before(async () => {
    if (skip) return;
    suite.world = await openServiceWorld(options);
    database = await createDatabase(process.env.DATABASE_URL!, options.database);
    suite.service = await suite.world.startService(database.url);
  });
  after(async () => {
    await suite.service?.killed();
    await suite.world?.close();
    await database?.drop();
  });
  return suite;
}

/**
 * Two anvil chains with Garden's localnet contracts, mining a block a second, and the user's WBTC
 * approved on both; with `litecoin` and `solana`, those chains too, as `hashlock dev` runs them (at
 * the test registry's block times). With `proxied`, the service reaches each node through a loopback
 * proxy the test controls.
 */
export async function openServiceWorld(options: WorldOptions = {}): Promise<ServiceWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-service-'));
  const registryPath = writeTestRegistry(dir, options.registryTimes);
  const registry = loadRegistry(registryPath);
  const user = devAccount('user');
  const serviceSolver = devAccount('solver').address;
  /** An anvil chain with the contracts deployed, mining a block a second, the user's WBTC approved to its HTLC. */
  const startEvm = async (key: string): Promise<Chain> => {
    const chain = registry.chain(key)!;
    const chainId = Number(evmChainId(chain));
    const node = await startAnvil({ chainId });
    const deployment = await deployLocalnet(chain, node.rpcUrl, chainId);
    await node.rpc('evm_setIntervalMining', [1]);
    const client = createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0 });
    const wallet = createWalletClient({ account: user, transport: http(node.rpcUrl) });
    await client.waitForTransactionReceipt({
      hash: await wallet.writeContract({ chain: undefined, address: deployment.contracts.wbtc, abi: erc20Abi, functionName: 'approve', args: [deployment.contracts.wbtcHtlc, maxUint256] }),
    });
    return { node, deployment, client };
  };
  // Every chain at once (each mostly waits on its node's start); those started are stopped if one fails.
  const starting = await Promise.allSettled([
    Promise.all([startEvm('ethereum_localnet'), startEvm('arbitrum_localnet')]),
    options.litecoin ? startLitecoinSide(registry.chain('litecoin_localnet')!, join(dir, 'chains')) : Promise.resolve(undefined),
    options.solana ? startSolanaSide(registry.chain('solana_localnet')!, join(dir, 'chains')) : Promise.resolve(undefined),
    options.tron ? startTronSide(registry.chain('tron_localnet')!) : Promise.resolve(undefined),
  ] as const);
  const [evmStarted, ltcStarted, solStarted, tronStarted] = starting;
  if (evmStarted.status === 'rejected' || ltcStarted.status === 'rejected' || solStarted.status === 'rejected' || tronStarted.status === 'rejected') {
    await Promise.allSettled([
      ...(evmStarted.status === 'fulfilled' ? evmStarted.value.map((c) => c.node.stop()) : []),
      ...(ltcStarted.status === 'fulfilled' && ltcStarted.value ? [ltcStarted.value.stop()] : []),
      ...(solStarted.status === 'fulfilled' && solStarted.value ? [solStarted.value.stop()] : []),
      ...(tronStarted.status === 'fulfilled' && tronStarted.value ? [tronStarted.value.stop()] : []),
    ]);
    rmSync(dir, { recursive: true, force: true });
    throw starting.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))[0];
  }
  const [eth, arb] = evmStarted.value;
  const ltc = ltcStarted.value;
  const sol = solStarted.value;
  const tron = tronStarted.value;
  const wbtc = (c: Chain, who: Address) => c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
  const balances = async (solver: Address = serviceSolver): Promise<Balances> => ({
    userEth: await wbtc(eth, user.address),
    userArb: await wbtc(arb, user.address),
    solverEth: await wbtc(eth, solver),
    solverArb: await wbtc(arb, solver),
  });

  const proxyTo = (url: string) => startTcpProxy({ host: '127.0.0.1', port: Number(new URL(url).port) });
  const proxies: ServiceWorld['proxies'] = options.proxied
    ? {
        eth: await proxyTo(eth.node.rpcUrl),
        arb: await proxyTo(arb.node.rpcUrl),
        ...(ltc ? { ltc: await proxyTo(ltc.rpcUrl) } : {}),
        ...(sol ? { sol: await proxyTo(sol.rpcUrl) } : {}),
        ...(tron ? { tron: await proxyTo(tron.rpcUrl) } : {}),
      }
    : {};
  const serviceUrl = (c: Chain) => (c === eth ? proxies.eth : proxies.arb)?.through(c.node.rpcUrl) ?? c.node.rpcUrl;
  const otherAccess = (side: ServiceChain, proxy: TcpProxy | undefined) => [side.chain.key, { ...side.access, rpc_url: proxy?.through(side.rpcUrl) ?? side.rpcUrl }] as const;
  const keyFiles = options.keyFiles ? writeServiceKeyFiles(dir) : undefined;
  // The dev config, on these chains and the test registry.
  const dev = JSON.parse(readFileSync(DEV_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
  const configPath = join(dir, 'hashlock.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      ...dev,
      registry: registryPath,
      log_level: 'info',
      rate_limit: false,
      // The test server takes 100 connections, shared by the files running at once: each of these
      // services asks for at most 10, not the default 20.
      database_pool_size: 10,
      chains: Object.fromEntries([
        ...[eth, arb].map((c) => [
          c.deployment.chain,
          { rpc_url: serviceUrl(c), ws_url: serviceUrl(c).replace(/^http/, 'ws'), relayer: devAccount('relayer').address, fee_claim: c.deployment.contracts.feeClaim },
        ]),
        ...(ltc ? [otherAccess(ltc, proxies.ltc)] : []),
        ...(sol ? [otherAccess(sol, proxies.sol)] : []),
        ...(tron ? [otherAccess(tron, proxies.tron)] : []),
      ]),
      ...(keyFiles ? { key_files: keyFiles.config } : {}),
      ...options.config,
    }),
  );

  const startService = async (databaseUrl: string): Promise<ServiceProcess> => {
    const store = await openStore({ databaseUrl });
    await migrate(store.db);
    const { key } = await createApp(store.db, { name: 'service test', gasless: true });
    await store.close();
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const plaintextKeys = {
      HASHLOCK_SECRET_KEY: randomBytes(32).toString('hex'),
      HASHLOCK_RELAYER_KEY: privateKeyOf(devAccount('relayer')),
      HASHLOCK_SOLVER_KEY: privateKeyOf(devAccount('solver')),
      HASHLOCK_FEE_SIGNER_KEY: privateKeyOf(devAccount('feeSigner')),
    };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HASHLOCK_DATA_DIR: dir,
      ...(keyFiles ? { HASHLOCK_KEY_PASSWORD_FILE: keyFiles.passwordFile } : plaintextKeys),
      PORT: String(port),
    };
    if (keyFiles) for (const name of [...Object.keys(plaintextKeys), 'HASHLOCK_KEY_PASSWORD']) delete env[name];
    let output = '';
    const healthy = () => fetch(`${api}/health`).then((r) => r.ok, () => false);
    const spawnOne = async (): Promise<ChildProcess> => {
      const child = spawn(process.execPath, [BIN, 'serve', '-c', configPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      for (const end = Date.now() + 60_000; !(await healthy()); await new Promise((r) => setTimeout(r, 50))) {
        if (child.exitCode !== null || Date.now() > end) {
          // Not left running: its pipes would keep the test process alive after the test failed.
          child.kill('SIGKILL');
          throw new Error(`the service did not start:\n${output}`);
        }
      }
      return child;
    };
    const request = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: { 'service-app-id': key, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const jobs = async (): Promise<Job[]> => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return (await client.query<Job>('select chain, order_id, action, idempotency_key, status, last_error, created_at, updated_at, signed_at from relayer_jobs order by id')).rows;
      } finally {
        await client.end();
      }
    };
    const service: ServiceProcess = {
      api,
      key,
      keys: keyFiles?.keys ?? Object.values(plaintextKeys),
      ...(keyFiles ? { keyPassword: keyFiles.password } : {}),
      child: await spawnOne(),
      output: () => output,
      healthy,
      request,
      call: async (path, init) => {
        const { status, body } = await request(init?.method ?? 'GET', path, init?.body);
        if (status >= 400) throw new Error(`${path}: ${status} ${body.error}`);
        return body.result;
      },
      jobs,
      failedJobs: async () => (await jobs()).filter((j) => j.status === 'failed').map(({ chain, idempotency_key, last_error }) => ({ chain, idempotency_key, last_error })),
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

  const wbtcRoute: SwapRoute = { from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', fromOwner: user.address, toOwner: user.address, amount: AMOUNT };
  const createSwaps = async (service: ServiceProcess, count: number, route = wbtcRoute) => {
    // The service reads the solver's balances every 5 s (a Bitcoin-family wallet's once its watcher
    // recorded the outputs): a service just started may have no liquidity for a while.
    const path = `/v2/quote?from=${route.from}&to=${route.to}&from_amount=${route.amount}`;
    let quote = await service.request('GET', path);
    for (const end = Date.now() + 30_000; quote.status === 400 && /insufficient liquidity/.test(quote.body.error) && Date.now() < end; quote = await service.request('GET', path)) {
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(quote.status, 200, `${path}: ${JSON.stringify(quote.body)}`);
    const destinationAmount = BigInt((quote.body.result as Array<{ destination: { amount: string } }>)[0]!.destination.amount);
    const created = await Promise.all(
      Array.from({ length: count }, () =>
        service.call('/v2/orders', {
          method: 'POST',
          body: {
            source: { asset: route.from, owner: route.fromOwner, amount: route.amount.toString() },
            destination: { asset: route.to, owner: route.toOwner, amount: destinationAmount.toString() },
            nonce: randomBytes(10).toString('hex'),
            ...(route.secretHash ? { secret_hash: route.secretHash } : {}),
            ...(route.solverId ? { solver_id: route.solverId } : {}),
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

  const statuses = (service: ServiceProcess, ids: string[]) => Promise.all(ids.map(async (id) => ((await service.call(`/v2/orders/${id}`)) as { status: string }).status));
  const waitStatus = async (service: ServiceProcess, ids: string[], status: string, timeoutMs: number) => {
    for (const end = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 500))) {
      const now = await statuses(service, ids);
      if (now.every((s) => s === status)) return;
      assert.ok(Date.now() < end, `not all ${status}: ${JSON.stringify(Object.fromEntries(ids.map((id, i) => [id, now[i]])))}\n${service.output().slice(-20_000)}`);
    }
  };

  return {
    registry,
    registryPath,
    eth,
    arb,
    ...(ltc ? { ltc } : {}),
    ...(sol ? { sol } : {}),
    ...(tron ? { tron } : {}),
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
    statuses,
    waitStatus,
    waitCompleted: (service, ids, timeoutMs) => waitStatus(service, ids, 'completed', timeoutMs),
    refundAfterTimelock: async (service, ids, source) => {
      await source.node.rpc('anvil_mine', [`0x${registry.chain(source.deployment.chain)!.sourceTimelock.toString(16)}`]);
      await waitStatus(service, ids, 'awaiting_refund', 60_000);
      for (const id of ids) await service.call(`/v2/orders/${id}?action=refund`, { method: 'PATCH', body: {} });
      await waitStatus(service, ids, 'refunded', 120_000);
    },
    htlcEvents: async (c, fromBlock) => {
      const logs = parseEventLogs({ abi: HTLC_EVENTS, logs: await c.client.getLogs({ address: c.deployment.contracts.wbtcHtlc, fromBlock, toBlock: 'latest' }) });
      const byOrder = new Map<string, string[]>();
      for (const e of logs) {
        const id = e.args.orderID.slice(2).toLowerCase();
        byOrder.set(id, [...(byOrder.get(id) ?? []), e.eventName]);
      }
      return byOrder;
    },
    // From the block after the newest: what is mined already counts in the balances read now.
    mark: async (solver) => ({
      balances: await balances(solver),
      blocks: new Map(await Promise.all([eth, arb].map(async (c) => [c, (await c.client.getBlockNumber()) + 1n] as const))),
      ...(solver ? { solver } : {}),
    }),
    assertNothingSecretPrinted: async (service, mark) => {
      const secrets: string[] = [];
      for (const c of [eth, arb]) {
        const logs = await c.client.getLogs({ address: c.deployment.contracts.wbtcHtlc, fromBlock: mark.blocks.get(c)!, toBlock: 'latest' });
        for (const e of parseEventLogs({ abi: HTLC_EVENTS, eventName: 'Redeemed', logs })) secrets.push(e.args.secret);
      }
      assert.ok(secrets.length > 0, 'the swaps revealed their secrets on chain');
      const output = service.output().toLowerCase();
      assert.ok(output.split('\n').length > 10, 'the service printed its log');
      const hidden = [...secrets, ...service.keys, privateKeyOf(devAccount('user')), ...(service.keyPassword ? [service.keyPassword] : [])].map((hex) =>
        hex.replace(/^0x/, '').toLowerCase(),
      );
      for (const value of hidden) assert.ok(!output.includes(value), `rule 7: ${value.slice(0, 6)}... is in the service's output`);
      if (service.keyPassword) assert.ok(!output.includes('plaintext key'), 'with key files, no plaintext key is warned of');
    },
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
      const end = await balances(mark.solver);
      const total = BigInt(swaps);
      assert.equal(start.userEth - end.userEth, total * AMOUNT, 'the user paid each source once');
      assert.equal(end.userArb - start.userArb, total * destinationAmount, 'the user received each destination once');
      assert.equal(end.solverEth - start.solverEth, total * AMOUNT, 'the solver received each source once');
      assert.equal(start.solverArb - end.solverArb, total * destinationAmount, 'the solver paid each destination once');
    },
    close: async () => {
      await Promise.all(Object.values(proxies).map((p) => p.close()));
      await Promise.all([eth, arb].map((c) => c.node.stop()));
      await Promise.all([ltc, sol, tron].flatMap((side) => (side ? [side.stop()] : [])));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The service's keys (the dev accounts' relayer, solver and fee signer, a fresh secret-box key) in key
 * files under `dir`, their password in a file: the config's key_files, and the keys in hex.
 */
function writeServiceKeyFiles(dir: string) {
  const password = randomBytes(12).toString('base64url');
  const passwordFile = join(dir, 'key-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const secret = randomBytes(32);
  const roles = [
    ['relayer', 'relayer', Buffer.from(privateKeyOf(devAccount('relayer')).slice(2), 'hex')],
    ['solver', 'solver', Buffer.from(privateKeyOf(devAccount('solver')).slice(2), 'hex')],
    ['fee_signer', 'fee-signer', Buffer.from(privateKeyOf(devAccount('feeSigner')).slice(2), 'hex')],
    ['secret', 'secret', secret],
  ] as const;
  const config: Record<string, string> = {};
  for (const [field, role, key] of roles) {
    // A low scrypt n: the service decrypts every file at each of its (re)starts.
    writeKeyFile(join(dir, 'keys', `${role}.json`), key, password, { role }, { scryptN: 1024 });
    config[field] = `keys/${role}.json`;
  }
  return { config, password, passwordFile, keys: roles.map(([, , key]) => key.toString('hex')) };
}
