// Two anvil chains, the API with the relayed order actions, and every worker driven by hand: one
// relayer and one watcher per chain, and the solver. `step()` runs each once, so a test decides when
// anything happens.
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { sha256, type Hex, type LocalAccount } from 'viem';
import { EvmWatcher } from '../../src/chains/evm/watcher.ts';
import type { Registry } from '../../src/chains/registry.ts';
import { refundTypedData } from '../../src/chains/solidity-htlc/typed-data.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { evmEngine, type EvmEngine } from '../../src/chains/evm/driver.ts';
import { evmSolverChains } from '../../src/chains/evm/solver-chain.ts';
import { Solver, type SolverChain, type SolverOptions, type SolverPass } from '../../src/solver/solver.ts';
import type { SecretBox } from '../../src/orders/secret-box.ts';
import type { Store, StoreKind } from '../../src/store/database.ts';
import { findJob, type RelayerJob } from '../../src/store/relayer-jobs.ts';
import { SOLVER } from '../helpers/fixtures.ts';
import { CHAINS, openRelayedApi, type ChainKey, type LocalChain, type MoreActions } from '../relayer/harness.ts';

export interface SwapWorld {
  api: FastifyInstance;
  store: Store;
  key: string;
  relayers: Record<ChainKey, EvmEngine>;
  /** The solver's transaction senders (its jobs, signed by the solver's account). */
  solverSenders: Record<ChainKey, EvmEngine>;
  watchers: Record<ChainKey, EvmWatcher>;
  solver: Solver;
  /** One solver pass, then the solver's senders send what it queued. */
  pass(): Promise<SolverPass>;
  /** Polls both watchers, then `pass()`. */
  step(): Promise<SolverPass>;
  /** Ticks the chain's solver sender until the solver's job `key` is confirmed or failed; returns it. */
  settleSolverJob(key: string, chain: ChainKey): Promise<RelayerJob>;
  /** PATCHes an order action while ticking the chain's relayer until its job is settled. */
  patchRelayed(orderId: string, action: string, chain: ChainKey, payload?: object): Promise<{ status: number; body: Record<string, any>; job?: RelayerJob }>;
  close(): Promise<void>;
}

const KEYS = Object.keys(CHAINS) as ChainKey[];

export async function openSwapWorld(
  kind: StoreKind,
  registry: Registry,
  chains: Record<ChainKey, LocalChain>,
  options: {
    solver?: SolverOptions;
    /** More solver adapters (other chain families), made over the world's store and secret box. */
    moreSolverChains?: (db: Store['db'], secrets: SecretBox) => SolverChain[];
    /** The order actions of other chain families. */
    moreActions?: MoreActions;
  } = {},
): Promise<SwapWorld> {
  const { api, store, key, solverAccount, secrets, rpc, actionsFor } = await openRelayedApi(kind, registry, chains, { waitMs: 300, pollMs: 10, ...(options.moreActions ? { moreActions: options.moreActions } : {}) });
  const relayers = Object.fromEntries(
    KEYS.map((k) => [
      k,
      evmEngine({ db: store.db, chain: k, chainId: CHAINS[k], rpcUrl: rpc[k], privateKey: privateKeyOf(devAccount('relayer')), recheckMs: 0, retryMs: 50 }),
    ]),
  ) as Record<ChainKey, EvmEngine>;
  const watchers = Object.fromEntries(
    await Promise.all(
      KEYS.map(async (k) => [k, new EvmWatcher(store.db, registry.chain(k)!, chains[k].client, { startBlock: await chains[k].client.getBlockNumber() })]),
    ),
  ) as Record<ChainKey, EvmWatcher>;
  const solverSenders = Object.fromEntries(
    KEYS.map((k) => [
      k,
      evmEngine({ db: store.db, chain: k, chainId: CHAINS[k], rpcUrl: rpc[k], privateKey: privateKeyOf(devAccount('solver')), signer: 'solver', recheckMs: 0, retryMs: 50 }),
    ]),
  ) as Record<ChainKey, EvmEngine>;
  const evmChains = evmSolverChains(registry, solverAccount.address, rpc, store.db);
  // As the service does at start: the solver's token approvals go out before any funding.
  for (const c of evmChains) await c.prepare();
  for (const k of KEYS) await solverSenders[k].tick();
  const solverChains = [...evmChains, ...(options.moreSolverChains?.(store.db, secrets) ?? [])];
  const solver = new Solver(store.db, SOLVER.id, solverChains, secrets, { clientActions: actionsFor, ...options.solver });

  // anvil mines a sent transaction just after it answers, and a simulation refused meanwhile is
  // retried 50 ms later: the senders tick until every job they sent is mined (or failed), and every
  // new job was tried, so a step's actions are on chain when it returns, as the tests assume.
  const unsettledSolverJobs = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from relayer_jobs
          where signer = 'solver' and (status in ('running', 'submitted') or (status = 'queued' and attempts = 0))`.execute(store.db)
      ).rows[0]!.n,
    );
  const pass = async () => {
    const done = await solver.tick();
    for (const until = Date.now() + 5_000; ; await new Promise((r) => setTimeout(r, 10))) {
      for (const k of KEYS) await solverSenders[k].tick();
      if ((await unsettledSolverJobs()) === 0 || Date.now() > until) break;
    }
    return done;
  };

  const patch = async (orderId: string, action: string, payload?: object) => {
    const res = await api.inject({
      method: 'PATCH',
      url: `/v2/orders/${orderId}?action=${action}`,
      headers: { 'service-app-id': key },
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json<Record<string, any>>() };
  };

  return {
    api,
    store,
    key,
    relayers,
    solverSenders,
    watchers,
    solver,
    pass,
    step: async () => {
      for (const k of KEYS) await watchers[k].poll();
      return pass();
    },
    settleSolverJob: async (jobKey, chain) => {
      for (const until = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 10))) {
        const job = await findJob(store.db, jobKey);
        if (job?.status === 'confirmed' || job?.status === 'failed') return job;
        assert.ok(Date.now() < until, `job ${jobKey} not settled: ${JSON.stringify(job)}`);
        await solverSenders[chain].tick();
      }
    },
    patchRelayed: async (orderId, action, chain, payload) => {
      const pending = patch(orderId, action, payload);
      const jobKey = `${orderId}:${action}`;
      const until = Date.now() + 15_000;
      let answer: { status: number; body: Record<string, any> } | undefined;
      void pending.then((a) => (answer = a));
      for (;;) {
        await relayers[chain].tick();
        const job = await findJob(store.db, jobKey);
        if (answer && (!job || job.status === 'confirmed' || job.status === 'failed')) return { ...answer, ...(job ? { job } : {}) };
        assert.ok(Date.now() < until, `job ${jobKey} not settled: ${JSON.stringify(job)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: async () => {
      await api.close();
      await store.close();
    },
  };
}

export const hex0x = (s: string): Hex => (s.startsWith('0x') ? (s as Hex) : `0x${s}`);

/**
 * The source initiator's consent to an instant refund of an EVM source: its EIP-712 signature of
 * Refund(orderId) in the source HTLC's domain, which the create response's typed_data names.
 */
export const instantRefundConsent = (signer: LocalAccount, created: Record<string, any>, sourceSwapId: string): Promise<Hex> =>
  signer.signTypedData(
    refundTypedData({ chainId: BigInt(created.typed_data.domain.chainId), htlc: created.typed_data.domain.verifyingContract, orderId: hex0x(sourceSwapId) }),
  );

export const AMOUNT = 100_000n;
export const DEST_AMOUNT = 99_700n;

/** The client's side of a WBTC swap ethereum_localnet -> arbitrum_localnet over HTTP. */
export function swapClient(w: SwapWorld, eth: LocalChain) {
  const user = devAccount('user');
  const read = async (id: string) =>
    (await w.api.inject({ url: `/v2/orders/${id}`, headers: { 'service-app-id': w.key } })).json<Record<string, any>>().result;
  const createOrder = async (withSecret: boolean) => {
    const secret: Hex = `0x${randomBytes(32).toString('hex')}`;
    const secretHash = sha256(secret);
    const res = await w.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': w.key },
      payload: {
        source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: DEST_AMOUNT.toString() },
        nonce: randomBytes(10).toString('hex'),
        ...(withSecret ? { secret_hash: secretHash } : {}),
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<Record<string, any>>().result;
    return { id: created.order_id as string, created, order: await read(created.order_id), secret, secretHash };
  };
  const initiate = async (o: Awaited<ReturnType<typeof createOrder>>) => {
    const approval = o.created.approval_transaction;
    const hash = await eth.wallet(user).sendTransaction({ account: user, chain: undefined, to: approval.to, data: approval.data });
    assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
    const td = o.created.typed_data;
    const signature = await user.signTypedData({
      domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
      types: { Initiate: td.types.Initiate },
      primaryType: 'Initiate',
      message: { ...td.message, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
    });
    const res = await w.patchRelayed(o.id, 'initiate', 'ethereum_localnet', { signature });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.job?.status, 'confirmed');
  };
  const consent = (o: Awaited<ReturnType<typeof createOrder>>) => instantRefundConsent(user, o.created, o.order.source_swap.swap_id);
  return { user, read, createOrder, initiate, instantRefundConsent: consent };
}
