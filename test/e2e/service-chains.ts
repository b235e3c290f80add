// The Litecoin and Solana chains of the service-process world, started as `hashlock dev` starts them
// (src/localnet/bitcoin/devnet.ts, src/localnet/solana/devnet.ts), with what a client does on them
// directly (clients reach the nodes, the service may not) and what a test reads back to tell that
// every payment happened once.
import { hexToBytes } from '@noble/curves/utils.js';
import { getAddressDecoder, type Address } from '@solana/kit';
import type { ChainAccessConfig } from '../../src/config/service-config.ts';
import { satoshis, type RpcBlock, type RpcTransaction } from '../../src/chains/bitcoin/chain-data.ts';
import { startLitecoinDevnet } from '../../src/localnet/bitcoin/devnet.ts';
import type { LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import type { Chain as RegistryChain } from '../../src/chains/registry.ts';
import { solanaDevnet } from '../../src/localnet/solana/devnet.ts';
import { solanaAddressOfKey, solanaSignerOfKey } from '../../src/chains/solana/keys.ts';
import { solanaRpc } from '../../src/chains/solana/rpc.ts';
import { signAndSend, solanaBalance, type SolanaWallet } from '../../src/chains/solana/swap-wallet.ts';
import { findLitecoind } from '../../src/localnet/bitcoin/litecoind.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { evmHexToTron } from '../../src/chains/tron/address.ts';
import { TronApi } from '../../src/chains/tron/api.ts';
import { deployTronLocalnet, type TronDeployment } from '../../src/localnet/tron/devnet.ts';
import { startTronLocalnet, type TronLocalnet } from '../../src/localnet/tron/local-chain.ts';
import { toCoins } from '../helpers/litecoin.ts';

const keyBytes = (role: 'solver' | 'user') => hexToBytes(privateKeyOf(devAccount(role)).slice(2));
const DEV_KEYS = {
  solver: privateKeyOf(devAccount('solver')),
  relayer: privateKeyOf(devAccount('relayer')),
  user: privateKeyOf(devAccount('user')),
  feeSigner: privateKeyOf(devAccount('feeSigner')),
};

/** A chain of the world besides the anvils: the service's access to it (its `chains.<key>`), before any proxy. */
export interface ServiceChain {
  chain: RegistryChain;
  rpcUrl: string;
  access: ChainAccessConfig;
  stop(): Promise<void>;
}

/** What one HTLC address saw on a Bitcoin-family chain: the payments to it and the transactions spending them. */
export interface HtlcActivity {
  payments: Array<{ txid: string; value: bigint }>;
  spends: Array<{ txid: string; outputs: Array<{ address: string | undefined; value: bigint }> }>;
}

export interface LitecoinSide extends ServiceChain {
  node: LitecoinNode;
  /** The dev user's and the solver's key-path addresses. */
  user: string;
  solverWallet: string;
  /** The client pays `amount` to `address` from the node's wallet; returns the txid. */
  pay(address: string, amount: bigint): Promise<string>;
  height(): Promise<number>;
  /** Every payment to each of `addresses`, and every spend of one, in the blocks from `fromHeight` and in the mempool. */
  activity(addresses: readonly string[], fromHeight: number): Promise<Map<string, HtlcActivity>>;
}

export interface SolanaSide extends ServiceChain {
  /** The dev user's account, as `hashlock swap` holds it. */
  user: SolanaWallet;
  solver: Address;
  /** The user's lamports, confirmed. */
  userLamports(): Promise<bigint>;
  /** The user signs a transaction of the API (base64) and sends it; resolves once it is confirmed. */
  send(base64: string): Promise<string>;
  /** The transactions that touched a swap account (its swap id, hex), failed ones included. */
  swapTransactions(swapIdHex: string): Promise<Array<{ signature: string; failed: boolean }>>;
}

/**
 * Whether litecoind is here. In CI a missing one fails; elsewhere
 * the reason (the caller skips loudly).
 */
export async function familiesMissing(): Promise<string | undefined> {
  if (!findLitecoind()) {
    if (process.env.CI) throw new Error('litecoind is not on the PATH: .ci/run installs it (apt-get install litecoind)');
    return 'litecoind is not on the PATH (apt-get install litecoind)';
  }
  return undefined;
}

/** Litecoin regtest as `hashlock dev` runs it (a block every registry block time), the solver's and the user's wallets funded. */
export async function startLitecoinSide(chain: RegistryChain, dataDir: string): Promise<LitecoinSide> {
  const devnet = await startLitecoinDevnet({ dataDir, chain, solverKey: keyBytes('solver'), userKey: keyBytes('user'), blockTimeMs: chain.blockTimeMs });
  if (!devnet) throw new Error('litecoind is not on the PATH');
  const { node } = devnet;
  const rpc = node.rpc;
  const transactions = async (fromHeight: number): Promise<RpcTransaction[]> => {
    const txs: RpcTransaction[] = [];
    for (let h = fromHeight, tip = await rpc.getBlockCount(); h <= tip; h++) {
      txs.push(...(await rpc.call<RpcBlock>('getblock', [await rpc.getBlockHash(h), 2])).tx);
    }
    for (const txid of await rpc.call<string[]>('getrawmempool')) txs.push(await rpc.call<RpcTransaction>('getrawtransaction', [txid, true]));
    return txs;
  };
  // Litecoin Core 0.21 names an output's address in `addresses`; later versions in `address`.
  type Output = RpcTransaction['vout'][number] & { scriptPubKey?: { address?: string; addresses?: string[] } };
  const addressOf = (o: Output) => o.scriptPubKey?.address ?? o.scriptPubKey?.addresses?.[0];
  return {
    chain,
    rpcUrl: node.rpcUrl,
    access: { rpc_url: node.rpcUrl, rpc_cookie_file: node.cookieFile },
    node,
    user: walletAddress(keyBytes('user'), chain.network),
    solverWallet: devnet.solverWallet,
    pay: (address, amount) => rpc.call<string>('sendtoaddress', [address, toCoins(amount)]),
    height: () => rpc.getBlockCount(),
    activity: async (addresses, fromHeight) => {
      const txs = await transactions(fromHeight);
      const seen = new Map<string, HtlcActivity>(addresses.map((a) => [a, { payments: [], spends: [] }]));
      const paidTo = new Map<string, string>();
      for (const tx of txs) {
        for (const out of tx.vout as Output[]) {
          const to = addressOf(out);
          const activity = to === undefined ? undefined : seen.get(to);
          if (!activity) continue;
          activity.payments.push({ txid: tx.txid, value: satoshis(out.value) });
          paidTo.set(`${tx.txid}:${out.n}`, to!);
        }
      }
      for (const tx of txs) {
        const spent = new Set(tx.vin.map((i) => paidTo.get(`${i.txid}:${i.vout}`)).filter((a): a is string => a !== undefined));
        for (const address of spent) {
          seen.get(address)!.spends.push({ txid: tx.txid, outputs: (tx.vout as Output[]).map((o) => ({ address: addressOf(o), value: satoshis(o.value) })) });
        }
      }
      return seen;
    },
    stop: () => devnet.stop(),
  };
}

/** The local Solana chain of `hashlock dev` (LiteSVM, a slot every registry block time), its programs deployed and the accounts funded. */
export async function startSolanaSide(chain: RegistryChain, dataDir: string): Promise<SolanaSide> {
  const started = await solanaDevnet.start(chain, { dataDir, keys: DEV_KEYS, blockTimeMs: chain.blockTimeMs, wellKnownPorts: false });
  if ('unavailable' in started) throw new Error(started.unavailable);
  const rpcUrl = String(started.access.rpc_url);
  const rpc = solanaRpc(rpcUrl);
  const user: SolanaWallet = { chainKey: chain.key, address: solanaAddressOfKey(DEV_KEYS.user), signer: solanaSignerOfKey(DEV_KEYS.user), rpc };
  return {
    chain,
    rpcUrl,
    access: started.access,
    user,
    solver: solanaAddressOfKey(DEV_KEYS.solver),
    userLamports: () => solanaBalance(user, undefined),
    send: (base64) => signAndSend(user, base64, Date.now() + 60_000, 200),
    swapTransactions: async (swapIdHex) => {
      const account = getAddressDecoder().decode(Buffer.from(swapIdHex, 'hex'));
      const list = await rpc.getSignaturesForAddress(account, { commitment: 'confirmed' }).send();
      return list.map((s) => ({ signature: s.signature, failed: s.err !== null }));
    },
    stop: () => started.stop(),
  };
}

export interface TronSide extends ServiceChain {
  localnet: TronLocalnet;
  deployment: TronDeployment;
  api: TronApi;
  /** The dev user's and the solver's base58 addresses. */
  user: string;
  solver: string;
}

/** The local Tron chain of `hashlock dev` (a block every registry block time), its USDT and HTLC deployed and the dev accounts funded. */
export async function startTronSide(chain: RegistryChain): Promise<TronSide> {
  const localnet = await startTronLocalnet({ name: chain.key, blockTimeMs: chain.blockTimeMs, solidifyDepth: chain.confirmationTarget });
  try {
    const deployment = await deployTronLocalnet(chain, localnet);
    return {
      chain,
      rpcUrl: localnet.url,
      access: { rpc_url: localnet.url, relayer: evmHexToTron(devAccount('relayer').address) },
      localnet,
      deployment,
      api: new TronApi(localnet.url),
      user: evmHexToTron(devAccount('user').address),
      solver: evmHexToTron(devAccount('solver').address),
      stop: () => localnet.stop(),
    };
  } catch (err) {
    await localnet.stop();
    throw err;
  }
}
