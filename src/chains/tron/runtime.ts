import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { engineWorkers } from '../../engine/engine.ts';
import type { Worker } from '../../lease-loop.ts';
import type { JobSigner } from '../../store/schema.ts';
import type { ChainContext, ChainRuntime } from '../adapter.ts';
import { evmHexToTron } from './address.ts';
import { TronApi } from './api.ts';
import { tronClientActions } from './client-actions.ts';
import { tronEngine } from './driver.ts';
import { TronHtlcReader } from './htlc-reads.ts';
import { tronSolverChain } from './solver-chain.ts';
import { hex41 } from './transactions.ts';
import { TronWatcher } from './watcher.ts';

/** The base58 Tron address of a secp256k1 key (the same 20 bytes as its EVM address). */
export const tronAddressOfKey = (key: Hex): string => evmHexToTron(privateKeyToAccount(key).address);

/**
 * One Tron chain, worked: the watcher of its HTLCs (per block), a transaction sender per account (the
 * relayer's gasless and client actions, the solver's own), the solver's operations and the clients'
 * actions, all through Tron's HTTP API at `rpc_url` (a full node, or TronGrid with `api_key`).
 */
export function connectTronChain(ctx: ChainContext): ChainRuntime {
  const { chain, access, db } = ctx;
  const api = new TronApi(access.rpc_url, access.api_key ? { apiKey: access.api_key } : {});
  const reader = new TronHtlcReader(api);
  const watcher = new TronWatcher(db, chain, api);
  const workers: Worker[] = [
    {
      lease: `watcher:${chain.key}`,
      wakeOnIndex: chain.key,
      // A third of a block (at most a second): a poll costs one header read until a block comes, and
      // a watcher polling once a block, out of step with the chain, saw each block up to a block late.
      intervalMs: access.poll_ms ?? Math.max(100, Math.min(Math.ceil(chain.blockTimeMs / 3), 1_000)),
      tick: async (_signal, wake) => {
        const read = await watcher.poll();
        if (read.to < read.head) wake(); // still catching up
      },
    },
  ];
  const senders = (signer: JobSigner, privateKey: Hex): Worker[] =>
    engineWorkers(tronEngine({ db, chain: chain.key, api, privateKey, signer, clock: ctx.clock, worker: ctx.instance, log: ctx.log.child({ chain: chain.key, worker: `${signer}-sender` }) }));
  if (ctx.relayerKey) workers.push(...senders('relayer', ctx.relayerKey));
  const solver = ctx.solverKey ? tronSolverChain(chain, ctx.registry, tronAddressOfKey(ctx.solverKey), reader, db) : undefined;
  if (ctx.solverKey) workers.push(...senders('solver', ctx.solverKey));
  return {
    workers,
    ...(solver ? { solver, prepare: () => solver.prepare() } : {}),
    ...(ctx.relayerKey || ctx.relayerAddress
      ? { clientActions: tronClientActions(db, ctx.registry, { reader, clock: ctx.clock, ...(ctx.solverKey ? { solverSigner: privateKeyToAccount(ctx.solverKey) } : {}) }) }
      : {}),
    async balances(party, assets) {
      const head = await api.nowBlock();
      const read = [];
      for (const asset of assets) {
        const balance = asset.token.schema === 'tron:trc20' ? await reader.trc20Balance(asset.token.address, party) : await api.balanceSun(hex41(party));
        read.push({ asset, balance, blockNumber: head.number });
      }
      return read;
    },
  };
}
