import type { FastifyInstance } from 'fastify';
import { ClaimSigner } from './affiliates/claims.ts';
import { buildApi } from './api/app.ts';
import { chainSigningOptions } from './chains/chain-access.ts';
import { loadRegistry, type Registry } from './chains/registry.ts';
import type { ServiceConfig } from './config/service-config.ts';
import { HttpPriceFeed } from './pricing/http-price-feed.ts';
import { StaticPriceSource, type PriceSource } from './pricing/price-source.ts';
import { buildStrategies } from './pricing/strategies.ts';
import { loadSecretKey, SecretBox } from './orders/secret-box.ts';
import { randomUUID } from 'node:crypto';
import { createPublicClient, http, parseGwei, type Hex } from 'viem';
import { EvmWatcher } from './chains/evm/watcher.ts';
import { privateKeyToAccount } from 'viem/accounts';
import { evmReadClients } from './relayer/chain-clients.ts';
import { EvmRelayer, runSender } from './relayer/evm-relayer.ts';
import { evmChainId } from './chains/evm/index.ts';
import type { JobSigner } from './store/schema.ts';
import { Solver, type SolverChain } from './solver/solver.ts';
import { BitcoinSolverChain } from './solver/bitcoin-chain.ts';
import { BitcoinWatcher } from './chains/bitcoin/watcher.ts';
import { bitcoinRpcFor } from './chains/bitcoin/rpc.ts';
import { BitcoinRelayer } from './relayer/bitcoin-relayer.ts';
import { hexToBytes } from '@noble/curves/utils.js';
import { xOnlyPublicKeyOf } from './chains/bitcoin/address.ts';
import { evmSolverChains } from './solver/evm-chain.ts';
import { leasedLoop, type LeasedLoop } from './lease-loop.ts';
import { subscribeNewHeads } from './chains/evm/new-heads.ts';
import { SolverBalanceReader } from './solver/balance-reader.ts';
import { checkSolvers } from './solver/solver-config.ts';
import { ConfigError } from './config/schema-check.ts';
import { migrate, openStore, type Store } from './store/database.ts';
import { syncRegistry } from './store/registry-sync.ts';
import { releaseExpiredLiquidity, syncSolvers } from './store/solvers.ts';
import { VERSION } from './version.ts';

export interface Service {
  store: Store;
  registry: Registry;
  api: FastifyInstance;
  url: string;
  stop: () => Promise<void>;
}

/** Opens the database, migrates it, loads and syncs the registry and solvers, and serves the API. */
export async function startService(config: ServiceConfig): Promise<Service> {
  const registry = loadRegistry(config.registryPath);
  checkSolvers(config.solvers, registry, 'config');
  const strategies = buildStrategies(config.strategies, config.solvers, registry);
  config.affiliateFeeAssets.forEach((id, i) => {
    if (!registry.asset(id)?.isActive) throw new ConfigError(`config: affiliate_fee_assets[${i}]: ${id} is not an active asset`);
  });
  const signingOptions = chainSigningOptions(config.chains, registry);
  const secrets = new SecretBox(loadSecretKey(process.env, config.dataDir, config.databaseUrl !== undefined));
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const stoppers: Array<() => unknown> = [];
  // Every worker stops at once (each aborts its own work in progress), the API with them.
  const stopAll = async () => {
    const results = await Promise.allSettled(stoppers.map((stop) => stop()));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  try {
    await migrate(store.db);
    await syncRegistry(store.db, registry);
    await syncSolvers(store.db, config.solvers);
    const prices = await priceSource(config, registry, stoppers);
    const evmRpc = Object.fromEntries(
      Object.entries(config.chains).flatMap(([key, access]) =>
        access.rpc_url && registry.chain(key)?.family === 'evm' ? [[key, access.rpc_url]] : [],
      ),
    );
    const bitcoinRpc = new Map(
      Object.entries(config.chains).flatMap(([key, access]) =>
        access.rpc_url && registry.chain(key)?.family === 'bitcoin' ? [[key, bitcoinRpcFor({ url: access.rpc_url, cookieFile: access.rpc_cookie_file })] as const] : [],
      ),
    );
    const solverAccount = config.keys.solver ? privateKeyToAccount(config.keys.solver) : undefined;
    const solverKey = config.keys.solver ? hexToBytes(config.keys.solver.slice(2)) : undefined;
    const solverXOnly = solverKey && xOnlyPublicKeyOf(solverKey);
    const api = await buildApi({
      store,
      registry,
      prices,
      strategies,
      solvers: config.solvers,
      secrets,
      affiliateFeeAssets: config.affiliateFeeAssets,
      signingOptions,
      ...(config.keys.feeSigner
        ? {
            claims: new ClaimSigner(registry, {
              account: privateKeyToAccount(config.keys.feeSigner),
              contracts: Object.fromEntries(Object.entries(config.chains).flatMap(([key, a]) => (a.fee_claim ? [[key, a.fee_claim]] : []))),
              client: evmReadClients(evmRpc),
            }),
          }
        : {}),
      ...(config.keys.relayer
        ? {
            relayer: {
              evmClient: evmReadClients(evmRpc),
              // The solver co-signs instant refunds on the chains where this key is its address.
              solverSigner: (chainKey: string) =>
                solverAccount && config.solvers.some((s) => s.addresses[chainKey]?.toLowerCase() === solverAccount.address.toLowerCase())
                  ? solverAccount
                  : undefined,
              // On Bitcoin-family chains the same key signs as the solver's x-only key.
              bitcoinSolverKey: (chainKey: string) =>
                solverKey && config.solvers.some((s) => s.addresses[chainKey]?.toLowerCase() === solverXOnly) ? solverKey : undefined,
              bitcoinRpc: (chainKey: string) => bitcoinRpc.get(chainKey),
            },
          }
        : {}),
      version: VERSION,
      logger: { level: config.logLevel },
      orderCacheMs: config.orderCacheMs,
      ...(config.rateLimits ? { rateLimits: config.rateLimits } : {}),
      trustProxy: config.trustProxy,
    });
    const balances = new SolverBalanceReader(store.db, registry, config.solvers, config.chains);
    const readBalances = async () => {
      try {
        await balances.refresh();
      } catch (err) {
        api.log.error({ err }, 'reading the solver balances failed');
      }
    };
    await readBalances();
    stoppers.push(every(5_000, readBalances));

    const instance = randomUUID();
    // Per EVM chain, a transaction sender per account: the relayer's (gasless actions) and the
    // solver's (its fundings, redeems and refunds). Each runs under its own lease, one instance at a
    // time, and is woken when a job of its own becomes due (`job_queued`, from any instance).
    const senders = new Map<string, LeasedLoop>();
    const unlistenJobs = await store.listen('job_queued', { message: (name) => senders.get(name)?.wake(), connected: () => undefined });
    stoppers.push(unlistenJobs);
    const evmSender = (key: string, signer: JobSigner, privateKey: Hex): void => {
      const chain = registry.chain(key)!;
      const sender = new EvmRelayer({
        db: store.db,
        chain: key,
        chainId: Number(evmChainId(chain)),
        rpcUrl: evmRpc[key]!,
        privateKey,
        signer,
        ...(config.chains[key]?.max_fee_gwei ? { maxFeePerGas: parseGwei(config.chains[key].max_fee_gwei) } : {}),
        worker: instance,
        log: api.log.child({ chain: key, worker: `${signer}-sender` }),
      });
      const loop = runSender(sender, { holder: instance, onError: (err) => api.log.error({ err, chain: key }, `${signer} sender pass failed`) });
      stoppers.push(() => loop.stop());
      senders.set(`${key}:${signer}`, loop);
    };
    if (config.keys.relayer) for (const key of Object.keys(evmRpc)) evmSender(key, 'relayer', config.keys.relayer);

    // The solver whose address (EVM, or the x-only key of a Bitcoin-family chain) is the configured
    // key's, one instance per solver. It runs whenever an order changes (every swap update notifies
    // `order_changed`), and once a second regardless.
    const ownSolver =
      solverAccount &&
      config.solvers.find((s) => Object.values(s.addresses).some((a) => a.toLowerCase() === solverAccount.address.toLowerCase() || a.toLowerCase() === solverXOnly));
    const solverChains: SolverChain[] = [];
    if (solverAccount && ownSolver) {
      for (const key of Object.keys(evmRpc)) evmSender(key, 'solver', config.keys.solver!);
      const evmChains = evmSolverChains(registry, solverAccount.address, evmRpc, store.db);
      // The one-time token approvals go out before the first funding needs them.
      for (const c of evmChains) await c.prepare().catch((err: unknown) => api.log.warn({ err, chain: c.chain.key }, 'queueing the solver approvals failed; the first funding queues them'));
      solverChains.push(...evmChains);
      for (const [key, rpc] of bitcoinRpc) {
        if (ownSolver.addresses[key]?.toLowerCase() === solverXOnly) solverChains.push(new BitcoinSolverChain(registry.chain(key)!, store.db, rpc, solverKey!, secrets));
      }
    }
    if (ownSolver && solverChains.length > 0) {
      const solver = new Solver(store.db, ownSolver.id, solverChains, secrets, {
        log: api.log.child({ worker: 'solver' }),
      });
      const loop = leasedLoop({
        db: store.db,
        lease: `solver:${ownSolver.id}`,
        holder: instance,
        intervalMs: 1_000,
        tick: (signal) => solver.tick(signal),
        onError: (err) => api.log.error({ err }, 'solver pass failed'),
      });
      stoppers.push(() => loop.stop());
      const unlisten = await store.listen('order_changed', {
        message: (orderId) => {
          solver.touch(orderId);
          loop.wake();
        },
        connected: () => undefined,
      });
      stoppers.push(unlisten);
    }

    // One watcher per EVM chain with an RPC, run by exactly one instance (a lease per chain). With a
    // WebSocket endpoint it reads each block as the node announces it; polling is the fallback.
    for (const [key, access] of Object.entries(config.chains)) {
      const chain = registry.chain(key);
      if (!access.rpc_url || chain?.family !== 'evm') continue;
      const client = createPublicClient({ transport: http(access.rpc_url, { batch: true }) });
      const watcher = new EvmWatcher(store.db, chain, client);
      const loop: LeasedLoop = leasedLoop({
        db: store.db,
        lease: `watcher:${key}`,
        holder: instance,
        intervalMs: Math.min(chain.blockTimeMs, 5_000),
        tick: async () => {
          const read = await watcher.poll();
          if (read.to < read.head) loop.wake(); // still catching up
        },
        onError: (err) => api.log.error({ err, chain: key }, 'watcher poll failed'),
      });
      stoppers.push(() => loop.stop());
      if (access.ws_url) {
        const unsubscribe = subscribeNewHeads(
          access.ws_url,
          () => loop.wake(),
          (err) => api.log.warn({ err, chain: key }, 'new-heads subscription failed; polling goes on'),
        );
        stoppers.push(unsubscribe);
      }
    }
    // Per Bitcoin-family chain with a node: a watcher (the solver's wallet among its scripts) and the
    // relayer that broadcasts the chain's signed transactions, each run by one instance.
    const solverWallets = (key: string) => solverChains.flatMap((c) => (c instanceof BitcoinSolverChain && c.chain.key === key ? [c.wallet] : []));
    for (const [key, rpc] of bitcoinRpc) {
      const chain = registry.chain(key)!;
      const watcher = new BitcoinWatcher(store.db, chain, rpc, { walletAddresses: solverWallets(key) });
      // Blocks are minutes apart; the mempool is what makes a funding show at once.
      const pollMs = Math.min(Math.max(chain.blockTimeMs / 10, 500), 2_000);
      const watcherLoop: LeasedLoop = leasedLoop({
        db: store.db,
        lease: `watcher:${key}`,
        holder: instance,
        intervalMs: pollMs,
        tick: async () => {
          const read = await watcher.poll();
          if (read.to < read.head) watcherLoop.wake();
        },
        onError: (err) => api.log.error({ err, chain: key }, 'watcher poll failed'),
      });
      const relayer = new BitcoinRelayer({ db: store.db, chain: key, rpc, worker: instance, log: api.log.child({ chain: key, worker: 'relayer' }) });
      const relayerLoop = leasedLoop({
        db: store.db,
        lease: `relayer:${key}`,
        holder: instance,
        intervalMs: 1_000,
        tick: () => relayer.tick(),
        onError: (err) => api.log.error({ err, chain: key }, 'relayer pass failed'),
      });
      stoppers.push(() => watcherLoop.stop(), () => relayerLoop.stop());
    }
    stoppers.push(
      every(10_000, async () => {
        try {
          const released = await releaseExpiredLiquidity(store.db, Math.floor(Date.now() / 1000));
          if (released > 0) api.log.info({ released }, 'released the liquidity of expired orders');
        } catch (err) {
          api.log.error({ err }, 'releasing expired liquidity failed');
        }
      }),
    );
    const address = await api.listen({ port: config.port, host: config.host });
    return {
      store,
      registry,
      api,
      url: address,
      // The API closes (answering the requests in flight) while the workers stop; the store last.
      stop: async () => {
        stoppers.push(() => api.close());
        try {
          await stopAll();
        } finally {
          await store.close();
        }
      },
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    await store.close();
    throw err;
  }
}

/** The configured HTTP feed (polled in the background), else the static prices of the config. */
async function priceSource(config: ServiceConfig, registry: Registry, stoppers: Array<() => unknown>): Promise<PriceSource> {
  if (!config.priceFeed) return new StaticPriceSource(config.prices);
  const feed = new HttpPriceFeed({
    url: config.priceFeed.url,
    priceIds: [...new Set(registry.assets.map((a) => a.priceId))],
    refreshMs: config.priceFeed.refresh_ms,
    maxAgeMs: config.priceFeed.max_age_ms,
  });
  await feed.start();
  stoppers.push(() => feed.stop());
  return feed;
}

/** Runs `task` (which handles its own errors) every `ms`, never two at once, until stopped. */
function every(ms: number, task: () => Promise<void>): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(task);
  }, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
