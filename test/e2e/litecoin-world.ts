// A swap world whose Litecoin chain (a real litecoind regtest node) is worked by hand beside the
// EVM chains: the Bitcoin-family watcher, broadcast queue and solver chain, and the client calls the
// Litecoin swap tests share.
import assert from 'node:assert/strict';
import { hexToBytes } from '@noble/curves/utils.js';
import { bitcoinEngine } from '../../src/chains/bitcoin/driver.ts';
import type { TxEngine } from '../../src/engine/engine.ts';
import { BitcoinActions } from '../../src/chains/bitcoin/client-actions.ts';
import type { LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';
import { BitcoinSolverChain } from '../../src/chains/bitcoin/solver-chain.ts';
import { BitcoinWatcher } from '../../src/chains/bitcoin/watcher.ts';
import type { Registry } from '../../src/chains/registry.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import type { SecretBox } from '../../src/orders/secret-box.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { SOLVER } from '../helpers/fixtures.ts';
import type { StoreKind } from '../../src/store/database.ts';
import type { LocalChain, startChains } from '../relayer/harness.ts';
import { openSwapWorld, swapClient, type SwapWorld } from './harness.ts';

export const LTC = 100_000_000n;
export const solverKey = hexToBytes(privateKeyOf(devAccount('solver')).slice(2));

type Side = { asset: string; owner: string; amount: bigint; delegate?: string };

export interface LitecoinWorld {
  w: SwapWorld;
  btcSolver: BitcoinSolverChain;
  watcher: BitcoinWatcher;
  relayer: TxEngine;
  secrets: SecretBox;
  /** Polls the Bitcoin watcher until it has read up to the node's head (a poll reads 10 blocks at most). */
  catchUp(): Promise<void>;
  /** One round: the Bitcoin watcher and broadcast queue, then the EVM watchers and the solver, then the broadcast queue again. */
  step(): ReturnType<SwapWorld['step']>;
  read(id: string): Promise<Record<string, any>>;
  /** Mines a Litecoin block and steps until the order satisfies `done` (a few rounds at most). */
  settle(id: string, done: (order: Record<string, any>) => boolean, what: string): Promise<Record<string, any>>;
  settleTo(id: string, status: string): Promise<Record<string, any>>;
  /** The destination amount of the best quote. */
  quote(from: string, to: string, amount: bigint): Promise<bigint>;
  create(source: Side, destination: Side, extra?: object): Promise<{ id: string; created: Record<string, any> }>;
}

/**
 * Opens a swap world on `kind` with the Litecoin chain of `registry` on `node`: the solver holds
 * 100 LTC of liquidity and its wallet 20 LTC, confirmed. A 60 s solver margin: the regtest source
 * timelock (60 blocks of 10 s) leaves room for the EVM destination's.
 */
export async function openLitecoinWorld(kind: StoreKind, registry: Registry, chains: Awaited<ReturnType<typeof startChains>>, node: LitecoinNode): Promise<LitecoinWorld> {
  const ltcChain = registry.chain('litecoin_localnet')!;
  const eth: LocalChain = chains.ethereum_localnet;
  let btcSolver!: BitcoinSolverChain;
  let secrets!: SecretBox;
  const w = await openSwapWorld(kind, registry, chains, {
    solver: { marginSeconds: 60 },
    moreSolverChains: (db, box) => {
      secrets = box;
      btcSolver = new BitcoinSolverChain(ltcChain, db, node.rpc, solverKey, box);
      return [btcSolver];
    },
    moreActions: (db, box) => ({ [ltcChain.key]: new BitcoinActions(db, registry, { secrets: box, rpc: node.rpc, solverKey }) }),
  });
  const watcher = new BitcoinWatcher(w.store.db, ltcChain, node.rpc, { walletAddresses: [btcSolver.wallet], startBlock: BigInt(await node.rpc.getBlockCount()) + 1n });
  const relayer = bitcoinEngine({ db: w.store.db, chain: ltcChain.key, rpc: node.rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
  await setSolverBalance(w.store.db, { solverId: SOLVER.id, asset: 'litecoin_localnet:ltc', balance: 100n * LTC });
  await node.rpc.call('sendtoaddress', [btcSolver.wallet, 20]);
  await node.mine(1);
  await watcher.poll();

  const catchUp = async () => {
    for (let read = await watcher.poll(); read.to < read.head; read = await watcher.poll());
  };
  const step = async () => {
    await catchUp();
    await relayer.tick();
    const stepped = await w.step();
    // What the solver wrote goes out at once, as the engine's wake on a new job sends it.
    await relayer.tick();
    return stepped;
  };
  const read = (id: string) => swapClient(w, eth).read(id);
  const settle = async (id: string, done: (order: Record<string, any>) => boolean, what: string) => {
    for (let round = 0; round < 12; round++) {
      await node.mine(1);
      await step();
      await step();
      if (done(await read(id))) return read(id);
    }
    assert.fail(`order ${id} never got ${what}: ${JSON.stringify(await read(id))}`);
  };
  return {
    w,
    btcSolver,
    watcher,
    relayer,
    secrets,
    catchUp,
    step,
    read,
    settle,
    settleTo: (id, status) => settle(id, (o) => o.status === status, `status ${status}`),
    async quote(from, to, amount) {
      const res = await w.api.inject({ url: `/v2/quote?from=${from}&to=${to}&from_amount=${amount}`, headers: { 'service-app-id': w.key } });
      assert.equal(res.statusCode, 200, res.body);
      return BigInt(res.json<{ result: Array<{ destination: { amount: string } }> }>().result[0]!.destination.amount);
    },
    async create(source, destination, extra = {}) {
      const res = await w.api.inject({
        method: 'POST',
        url: '/v2/orders',
        headers: { 'service-app-id': w.key },
        payload: { source: { ...source, amount: source.amount.toString() }, destination: { ...destination, amount: destination.amount.toString() }, ...extra },
      });
      assert.equal(res.statusCode, 201, res.body);
      const created = res.json<{ result: Record<string, any> }>().result;
      return { id: created.order_id as string, created };
    },
  };
}
