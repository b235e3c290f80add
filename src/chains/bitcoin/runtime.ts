import { hexToBytes } from '@noble/curves/utils.js';
import { confirmedBalance } from './store/utxos.ts';
import type { ChainContext, ChainRuntime } from '../adapter.ts';
import { engineWorkers } from '../../engine/engine.ts';
import { bitcoinEngine } from './driver.ts';
import type { BitcoinPayload } from './store/jobs.ts';
import { BitcoinActions } from './client-actions.ts';
import { bitcoinRpcFor } from './rpc.ts';
import { BitcoinSolverChain } from './solver-chain.ts';
import { spendRequestWorker } from './spend-requests.ts';
import { keyPathAddress } from './wallet-tx.ts';
import { BitcoinWatcher } from './watcher.ts';

/**
 * One Bitcoin-family chain, worked: the watcher (the solver's wallet among its scripts), the
 * broadcaster of the chain's signed transactions, the solver's operations and the clients' actions.
 */
export function connectBitcoinChain(ctx: ChainContext): ChainRuntime {
  const { chain, access, db } = ctx;
  const rpc = bitcoinRpcFor({ url: access.rpc_url, cookieFile: access.rpc_cookie_file });
  const solverKey = ctx.solverKey && hexToBytes(ctx.solverKey.slice(2));
  const bump = access.fee_bump ?? {};
  const solver = solverKey && new BitcoinSolverChain(chain, db, rpc, solverKey, ctx.secrets, bump.replace_by_fee, ctx.clock);
  const watcher = new BitcoinWatcher(db, chain, rpc, { walletAddresses: solver ? [solver.wallet] : [] });
  const log = ctx.log.child({ chain: chain.key, worker: 'relayer' });
  // Stuck transactions are bumped from the solver's wallet, or by the replacements signed with them.
  const bumper = solver?.feeBumper({
    ...(bump.after_blocks !== undefined ? { afterBlocks: bump.after_blocks } : {}),
    ...(bump.rounds !== undefined ? { maxRounds: bump.rounds } : {}),
    ...(bump.max_fee_rate !== undefined ? { maxFeeRate: BigInt(bump.max_fee_rate) } : {}),
    ...(bump.replace_by_fee !== undefined ? { replaceByFee: bump.replace_by_fee } : {}),
  });
  const engine = bitcoinEngine({
    db,
    chain: chain.key,
    rpc,
    worker: ctx.instance,
    clock: ctx.clock,
    log,
    ...(bumper ? { bumper } : {}),
    ...(solver ? { cancelFunding: (payload: BitcoinPayload, signed: { raw: string; hash: string }) => solver.cancelFunding(payload, signed) } : {}),
  });
  const clientActions = new BitcoinActions(db, ctx.registry, {
    secrets: ctx.secrets,
    rpc,
    clock: ctx.clock,
    ...(solverKey ? { solverKey } : {}),
  });
  // An instance whose secrets open signs what instances without the keys ask for.
  const signing = ctx.secrets.canOpen
    ? [spendRequestWorker(db, chain.key, ctx.secrets, clientActions.performForwarded, { clock: ctx.clock, log: ctx.log.child({ chain: chain.key, worker: 'spend-requests' }) })]
    : [];
  return {
    workers: [
      {
        lease: `watcher:${chain.key}`,
        wakeOnIndex: chain.key,
        // Blocks are minutes apart; the mempool is what makes a funding show at once.
        intervalMs: access.poll_ms ?? Math.min(Math.max(chain.blockTimeMs / 10, 500), 2_000),
        tick: async (_signal, wake) => {
          const read = await watcher.poll();
          if (read.to < read.head) wake();
        },
      },
      ...engineWorkers(engine),
      ...signing,
    ],
    ...(solver ? { solver } : {}),
    clientActions,
    // The confirmed unspent outputs of the party's key-path wallet that the watcher recorded.
    async balances(party, assets) {
      const balance = await confirmedBalance(db, chain.key, keyPathAddress(hexToBytes(party.toLowerCase()), chain.network));
      return assets.map((asset) => ({ asset, balance }));
    },
  };
}
