import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { walletAddress } from '../../chains/bitcoin/wallet-tx.ts';
import type { Chain } from '../../chains/registry.ts';
import type { FamilyDevnet } from '../local-chain.ts';
import { hexToBytes } from '@noble/curves/utils.js';
import { xOnlyPublicKeyOf } from '../../chains/bitcoin/address.ts';
import { scanUtxoSet } from '../../chains/bitcoin/utxo-scan.ts';
import { findLitecoind, startLitecoind, type LitecoinNode } from './litecoind.ts';
import { leftoverNotes, stopLeftovers } from '../node-process.ts';

export interface LitecoinDevnet {
  node: LitecoinNode;
  chain: Chain;
  /** Key-path P2TR addresses of the solver's and the test user's keys (their x-only keys in the scripts). */
  solverWallet: string;
  userWallet: string;
  /** The processes of an earlier run's node that this start stopped. */
  leftovers: number[];
  stop(): Promise<void>;
}

/** What `hashlock dev` funds on a fresh regtest chain, in litoshis. */
export const SOLVER_FUNDS = 100_00000000n;
export const USER_FUNDS = 10_00000000n;
const SOLVER_OUTPUTS = 4n;

const coins = (sats: bigint) => Number(sats) / 1e8;

/** A solver's funds, in several outputs: each confirmed output can carry its own chain of unconfirmed fundings. */
async function payOutputs(node: LitecoinNode, wallet: string): Promise<void> {
  for (let i = 0n; i < SOLVER_OUTPUTS; i++) await node.rpc.call('sendtoaddress', [wallet, coins(SOLVER_FUNDS / SOLVER_OUTPUTS)]);
}

/** Gives another solver's key-path wallet (an external solver's) the dev solver's funds, unless it holds half of them already. */
export async function fundSolverWallet(node: LitecoinNode, chain: Chain, key: Uint8Array): Promise<void> {
  const wallet = walletAddress(key, chain.network);
  const held = (await scanUtxoSet(node.rpc, [wallet])).reduce((sum, o) => sum + o.value, 0n);
  if (held >= SOLVER_FUNDS / 2n) return;
  await payOutputs(node, wallet);
  await node.mine(1);
}

/**
 * The Litecoin regtest chain of `hashlock dev`, or undefined when `litecoind` is not installed. The
 * node keeps its chain in `<data dir>/litecoin`, so a restart resumes; on the first start the solver's
 * and the user's wallet addresses are funded from the node's mined coins. A block is mined every
 * `blockTimeMs` (0: only when asked, as tests and benchmarks do).
 */
export async function startLitecoinDevnet(options: {
  dataDir: string;
  chain: Chain;
  solverKey: Uint8Array;
  userKey: Uint8Array;
  blockTimeMs: number;
}): Promise<LitecoinDevnet | undefined> {
  if (!findLitecoind()) return undefined;
  const dataDir = join(options.dataDir, 'litecoin');
  // A node of this data directory that outlived an earlier run holds its lock.
  const leftovers = await stopLeftovers(`-datadir=${dataDir}`);
  const node = await startLitecoind({ dataDir });
  try {
    const network = options.chain.network;
    const solverWallet = walletAddress(options.solverKey, network);
    const userWallet = walletAddress(options.userKey, network);
    const marker = join(options.dataDir, 'litecoin', 'funded');
    if (!existsSync(marker)) {
      await payOutputs(node, solverWallet);
      await node.rpc.call('sendtoaddress', [userWallet, coins(USER_FUNDS)]);
      await node.mine(1);
      writeFileSync(marker, `${solverWallet}\n${userWallet}\n`);
    }
    let mining: Promise<unknown> = Promise.resolve();
    const timer =
      options.blockTimeMs > 0
        ? setInterval(() => {
            mining = node.mine(1).catch(() => undefined);
          }, options.blockTimeMs)
        : undefined;
    return {
      node,
      chain: options.chain,
      solverWallet,
      userWallet,
      leftovers,
      stop: async () => {
        clearInterval(timer);
        await mining;
        await node.stop();
      },
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/**
 * A Bitcoin-family chain of `hashlock dev`: the Litecoin Core regtest node when `litecoind` is
 * installed (regtest is the one Bitcoin-family local chain), the solver's and the test user's
 * key-path wallets funded on first start.
 */
export const bitcoinDevnet: FamilyDevnet = {
  async start(chain, options) {
    if (chain.network !== 'litecoin_regtest') return { unavailable: `${chain.key}: only a Litecoin regtest chain runs locally (network ${chain.network})` };
    const solverKey = hexToBytes(options.keys.solver.slice(2));
    const userKey = hexToBytes(options.keys.user.slice(2));
    const devnet = await startLitecoinDevnet({ dataDir: options.dataDir, chain, solverKey, userKey, blockTimeMs: options.blockTimeMs });
    if (!devnet) return { unavailable: `litecoind is not on the PATH: ${chain.key} stays off (install Litecoin Core, e.g. apt-get install litecoind)` };
    const { node } = devnet;
    return {
      chain,
      access: { rpc_url: node.rpcUrl, rpc_cookie_file: node.cookieFile },
      record: { rpc_url: node.rpcUrl, rpc_cookie_file: node.cookieFile },
      // The same private key is a taproot key here: its x-only key and key-path address.
      accounts: {
        user: { litecoin: { address: devnet.userWallet, x_only: xOnlyPublicKeyOf(userKey) } },
        solver: { litecoin: { address: devnet.solverWallet } },
      },
      describe: `${node.rpcUrl} (regtest, cookie ${node.cookieFile})`,
      fund: (key) => fundSolverWallet(node, chain, hexToBytes(key.slice(2))),
      notes: leftoverNotes(chain.key, devnet.leftovers),
      stop: () => devnet.stop(),
    };
  },
};
