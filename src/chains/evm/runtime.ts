import { createPublicClient, erc20Abi, http, parseGwei, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { JobSigner } from '../../store/schema.ts';
import type { Worker } from '../../lease-loop.ts';
import type { ChainContext, ChainRuntime } from '../adapter.ts';
import { evmClientActions } from './client-actions.ts';
import { evmChainId } from './index.ts';
import { subscribeNewHeads } from './new-heads.ts';
import { engineWorkers } from '../../engine/engine.ts';
import { evmEngine } from './driver.ts';
import { evmSolverChain } from './solver-chain.ts';
import { EvmWatcher } from './watcher.ts';

/**
 * One EVM chain, worked: the watcher (woken by the node's new heads over `ws_url`, polling as the
 * fallback), a transaction sender per account (the relayer's gasless actions, the solver's own
 * transactions), the solver's operations and the clients' actions.
 */
export function connectEvmChain(ctx: ChainContext): ChainRuntime {
  const { chain, access, db } = ctx;
  const client = createPublicClient({ transport: http(access.rpc_url, { batch: true }), cacheTime: 0 });
  const watcher = new EvmWatcher(db, chain, client);
  const workers: Worker[] = [
    {
      lease: `watcher:${chain.key}`,
      wakeOnIndex: chain.key,
      intervalMs: access.poll_ms ?? Math.min(chain.blockTimeMs, 5_000),
      tick: async (_signal, wake) => {
        const read = await watcher.poll();
        if (read.to < read.head) wake(); // still catching up
      },
      ...(access.ws_url
        ? {
            subscribe: (wake: () => void) =>
              subscribeNewHeads(access.ws_url!, wake, (err) => ctx.log.warn({ err, chain: chain.key }, 'new-heads subscription failed; polling goes on')),
          }
        : {}),
    },
  ];
  // A sender per account, each under its own lease and woken when a job of its own becomes due.
  const senders = (signer: JobSigner, privateKey: `0x${string}`): Worker[] => {
    const engine = evmEngine({
      db,
      chain: chain.key,
      chainId: Number(evmChainId(chain)),
      rpcUrl: access.rpc_url,
      privateKey,
      signer,
      ...(access.max_fee_gwei ? { maxFeePerGas: parseGwei(access.max_fee_gwei) } : {}),
      ...(access.fee_bump?.after_seconds ? { bumpAfterMs: access.fee_bump.after_seconds * 1_000 } : {}),
      worker: ctx.instance,
      clock: ctx.clock,
      log: ctx.log.child({ chain: chain.key, worker: `${signer}-sender` }),
    });
    return engineWorkers(engine);
  };
  if (ctx.relayerKey) workers.push(...senders('relayer', ctx.relayerKey));
  const solver = ctx.solverKey ? evmSolverChain(chain, ctx.registry, privateKeyToAccount(ctx.solverKey).address, access.rpc_url, db) : undefined;
  if (ctx.solverKey) workers.push(...senders('solver', ctx.solverKey));
  return {
    workers,
    ...(solver ? { solver, prepare: () => solver.prepare() } : {}),
    ...(ctx.relayerKey || ctx.relayerAddress
      ? { clientActions: evmClientActions(db, ctx.registry, { client, clock: ctx.clock, ...(ctx.solverKey ? { solverSigner: privateKeyToAccount(ctx.solverKey) } : {}) }) }
      : {}),
    async balances(party, assets) {
      const address = party as Address;
      const blockNumber = await client.getBlockNumber();
      const read = [];
      for (const asset of assets) {
        const balance =
          asset.token.schema === 'evm:native'
            ? await client.getBalance({ address, blockNumber })
            : await client.readContract({ address: asset.token.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [address], blockNumber });
        read.push({ asset, balance, blockNumber });
      }
      return read;
    },
  };
}
