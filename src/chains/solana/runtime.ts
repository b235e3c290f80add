import { type Address } from '@solana/kit';
import type { Hex } from 'viem';
import type { Worker } from '../../lease-loop.ts';
import type { JobSigner } from '../../store/schema.ts';
import type { ChainContext, ChainRuntime } from '../adapter.ts';
import { solanaBalance } from './balances.ts';
import { SolanaClientActions } from './client-actions.ts';
import { solanaRpc } from './rpc.ts';
import { SolanaChainReader } from './htlc-state.ts';
import { solanaJobInstructions } from './job-instructions.ts';
import { solanaAddressOfKey, solanaSignerOfKey } from './keys.ts';
import { engineWorkers } from '../../engine/engine.ts';
import { solanaEngine } from './driver.ts';
import { SolanaSolverChain } from './solver-chain.ts';
import { SolanaWatcher } from './watcher.ts';

/**
 * One Solana chain, worked: the watcher of its HTLC programs, a transaction sender per account (the
 * relayer's gasless and client actions, the solver's own), the solver's operations and the clients'
 * actions. Every action is a job of the durable queue, as on the other families.
 */
export function connectSolanaChain(ctx: ChainContext): ChainRuntime {
  const { chain, access, db } = ctx;
  const rpc = solanaRpc(access.rpc_url);
  const reader = new SolanaChainReader(access.rpc_url);
  const watcher = new SolanaWatcher(db, chain, access.rpc_url);
  const workers: Worker[] = [
    {
      lease: `watcher:${chain.key}`,
      wakeOnIndex: chain.key,
      intervalMs: access.poll_ms ?? Math.min(chain.blockTimeMs, 2_000),
      tick: async () => {
        await watcher.poll();
      },
    },
  ];
  const sender = (signer: JobSigner, key: Hex): Worker[] =>
    engineWorkers(
      solanaEngine({
        db,
        chain: chain.key,
        rpcUrl: access.rpc_url,
        payer: solanaSignerOfKey(key),
        signer,
        instructions: solanaJobInstructions,
        worker: ctx.instance,
        clock: ctx.clock,
        log: ctx.log.child({ chain: chain.key, worker: `${signer}-sender` }),
      }),
      400,
    );
  const solverAddress = ctx.solverKey ? solanaAddressOfKey(ctx.solverKey) : undefined;
  if (ctx.relayerKey) workers.push(...sender('relayer', ctx.relayerKey));
  if (ctx.solverKey) workers.push(...sender('solver', ctx.solverKey));
  const relayer = ctx.relayerKey ? solanaAddressOfKey(ctx.relayerKey) : (ctx.relayerAddress as Address | undefined);
  return {
    workers,
    ...(solverAddress ? { solver: new SolanaSolverChain(chain, ctx.registry, solverAddress, reader, db) } : {}),
    ...(relayer
      ? {
          clientActions: new SolanaClientActions(db, ctx.registry, chain, {
            reader,
            clock: ctx.clock,
            relayer,
            ...(solverAddress ? { solver: solverAddress } : {}),
          }),
        }
      : {}),
    async balances(party, assets) {
      const read = [];
      for (const asset of assets) {
        const mint = asset.token.schema === 'solana:native' ? undefined : asset.token.address;
        const { balance, slot } = await solanaBalance(rpc, party as Address, mint);
        read.push({ asset, balance, blockNumber: slot });
      }
      return read;
    },
  };
}
