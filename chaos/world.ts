// The chaos run's world: the service-process world of the e2e tests (two anvils, Litecoin regtest, the
// local Solana and Tron chains, each behind a proxy the run controls) on a PostgreSQL server of the
// run's own, two `hashlock serve --role all` instances on one database (a load balancer's pair: either
// answers the API, their workers share the leases), and a registered maker's `hashlock solver`.
import { hexToBytes } from '@noble/curves/utils.js';
import { encodeFunctionData, erc20Abi, http, createWalletClient, maxUint256, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { walletAddress } from '../src/chains/bitcoin/wallet-tx.ts';
import { tronToEvmHex } from '../src/chains/tron/address.ts';
import { signTronCall } from '../src/chains/tron/transactions.ts';
import { fundSolverWallet } from '../src/localnet/bitcoin/devnet.ts';
import { devAccount, privateKeyOf } from '../src/localnet/accounts.ts';
import type { LitecoinSide, SolanaSide, TronSide } from '../test/e2e/service-chains.ts';
import { openServiceWorld, type Chain, type ServiceProcess, type ServiceWorld } from '../test/e2e/service-process.ts';
import { registerMaker, startMakerProcess, type MakerProcess } from '../test/e2e/solver-maker.ts';
import { startPostgresServer, type PostgresServer } from '../test/helpers/postgres-server.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { timelocksInSeconds, type ChainTimes, type RegistryTimes } from '../test/helpers/test-registry.ts';

export const MAKER_ID = 'chaos-maker';
const WBTCS = ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc'];
const MAKER_WBTC = 3n * 10n ** 8n;

export interface WorldTimes {
  /** Every chain's source and destination timelock, in seconds. */
  sourceSeconds: number;
  destinationSeconds: number;
  /** Rule 2's margin of the service's solver and the maker. */
  marginSeconds: number;
  /** The confirmation target of the chains a reorg may hit (the anvils and Litecoin). */
  confirmations: number;
}

export interface Maker extends MakerProcess {
  evm: Address;
  ltcWallet: string;
}

export interface ChaosWorld {
  world: ServiceWorld;
  eth: Chain;
  arb: Chain;
  ltc: LitecoinSide;
  sol: SolanaSide;
  tron: TronSide;
  postgres: PostgresServer;
  databaseUrl: string;
  /** Instance A and B. */
  instances: [ServiceProcess, ServiceProcess];
  /** The app key the clients use (either instance takes it: one database). */
  appKey: string;
  maker: Maker;
  times: WorldTimes;
  /** Starts an instance again after a kill, until it answers (a fault elsewhere may slow its start). */
  restartInstance(i: 0 | 1): Promise<void>;
  restartMaker(): Promise<void>;
  close(): Promise<void>;
}

/** Waits out a start that fails while another fault lasts: tried again until `timeoutMs`. */
async function retried(what: string, start: () => Promise<void>, timeoutMs = 300_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await start();
    } catch (err) {
      if (Date.now() > end) throw new Error(`${what}: ${String(err).slice(0, 2_000)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
}

export async function openChaosWorld(times: WorldTimes, log: (line: string) => void): Promise<ChaosWorld> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const started = Date.now();
    const postgres = await startPostgresServer();
    closers.push(() => postgres.destroy());
    const database = await createDatabase(postgres.url, 'hashlock_chaos');
    const timelocks = timelocksInSeconds({ source: times.sourceSeconds, destination: times.destinationSeconds });
    // The registry's times take any field of a chain: the reorg-prone chains confirm deeper.
    const registryTimes: RegistryTimes = Object.fromEntries(
      Object.entries(timelocks).map(([key, t]) => [key, (['ethereum_localnet', 'arbitrum_localnet', 'litecoin_localnet'].includes(key) ? { ...t, confirmation_target: times.confirmations } : t) as ChainTimes]),
    );
    const world = await openServiceWorld({
      proxied: true,
      litecoin: true,
      solana: true,
      tron: true,
      keyFiles: true,
      registryTimes,
      // The maker stays quoted through its outages (a suspension would only move orders to the service's solver).
      config: { solver_rule2_margin_seconds: times.marginSeconds, solver_fund_within_seconds: 3_600, log_level: 'info' },
    });
    closers.push(() => world.close());
    const { eth, arb } = world;
    const ltc = world.ltc!;
    const sol = world.sol!;
    const tron = world.tron!;
    log(`chains up in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    const a = await world.startService(database.url);
    closers.push(() => a.killed());
    const b = await world.startService(database.url);
    closers.push(() => b.killed());
    log(`instances A (${a.api}) and B (${b.api}) up`);

    // The user approves the Tron HTLC once, as a wallet does before its first gasless initiate.
    const userKey = privateKeyOf(devAccount('user'));
    const head = await tron.api.nowBlock();
    const approve = await signTronCall({
      call: { contract: tron.deployment.usdt, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [tronToEvmHex(tron.deployment.usdtHtlc), maxUint256] }) },
      owner: tron.user,
      privateKey: userKey,
      reference: head,
      expiration: head.timestampMs + 60_000,
      feeLimitSun: 150_000_000n,
    });
    const sent = await tron.api.broadcast(approve as unknown as Record<string, unknown>);
    if (sent.result !== true) throw new Error(`the user's Tron approval: ${JSON.stringify(sent)}`);

    // The maker: its own key, funded on the anvils (WBTC from the user) and on Litecoin.
    const key: Hex = generatePrivateKey();
    const evm = privateKeyToAccount(key).address;
    for (const c of [eth, arb]) {
      await c.node.rpc('anvil_setBalance', [evm, `0x${parseEther('10').toString(16)}`]);
      const wallet = createWalletClient({ account: devAccount('user'), transport: http(c.node.rpcUrl) });
      await c.client.waitForTransactionReceipt({ hash: await wallet.writeContract({ chain: undefined, address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [evm, MAKER_WBTC] }) });
    }
    await fundSolverWallet(ltc.node, ltc.chain, hexToBytes(key.slice(2)));
    const through = (name: 'eth' | 'arb' | 'ltc', url: string) => world.proxies[name]!.through(url);
    const started2 = Date.now();
    const process = await startMakerProcess({
      id: MAKER_ID,
      key,
      serviceApi: a.api,
      apiKey: await registerMaker(database.url, MAKER_ID),
      chains: {
        ethereum_localnet: { rpc_url: through('eth', eth.node.rpcUrl), ws_url: through('eth', eth.node.rpcUrl).replace(/^http/, 'ws') },
        arbitrum_localnet: { rpc_url: through('arb', arb.node.rpcUrl), ws_url: through('arb', arb.node.rpcUrl).replace(/^http/, 'ws') },
        litecoin_localnet: { ...ltc.access, rpc_url: through('ltc', ltc.rpcUrl) },
      },
      strategies: [
        { solver: MAKER_ID, from: WBTCS, to: WBTCS, fee_bips: 20 },
        { solver: MAKER_ID, from: WBTCS, to: ['litecoin_localnet:ltc'], fee_bips: 20 },
        { solver: MAKER_ID, from: ['litecoin_localnet:ltc'], to: WBTCS, fee_bips: 20 },
      ],
      registry: world.registryPath,
      config: { solver_rule2_margin_seconds: times.marginSeconds },
    });
    const maker: Maker = Object.assign(process, { evm, ltcWallet: walletAddress(hexToBytes(key.slice(2)), ltc.chain.network) });
    closers.push(() => maker.remove());
    log(`maker ${MAKER_ID} up in ${((Date.now() - started2) / 1000).toFixed(0)} s`);

    const instances: [ServiceProcess, ServiceProcess] = [a, b];
    return {
      world,
      eth,
      arb,
      ltc,
      sol,
      tron,
      postgres,
      databaseUrl: database.url,
      instances,
      appKey: a.key,
      maker,
      times,
      restartInstance: (i) =>
        retried(`instance ${i === 0 ? 'A' : 'B'} restart`, async () => {
          await instances[i].killed();
          await instances[i].restart();
        }),
      restartMaker: () =>
        retried('maker restart', async () => {
          await maker.kill();
          await maker.restart();
        }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
