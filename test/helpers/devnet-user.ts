// A test user of its own on a running `hashlock dev`, for tests that share one devnet and run at the
// same time: a swap test checks its user's balances before and after each swap, which another test's
// swaps would move if they were the same user's. The new user is funded from the chains' own faucets
// (anvil's balances, the Litecoin node's wallet, Solana's airdrop) and, for test tokens, by the
// devnet's test user; its devnet.json (the devnet's, with this user) is what `hashlock swap` reads
// from the directory this returns (`--data-dir`, HASHLOCK_DATA_DIR).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lamports, type Address as SolanaAddress } from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstructionAsync, getTransferInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createPublicClient, createWalletClient, erc20Abi, http, numberToHex, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hexToBytes } from '@noble/curves/utils.js';
import { xOnlyPublicKeyOf } from '../../src/chains/bitcoin/address.ts';
import { bitcoinRpcFor } from '../../src/chains/bitcoin/rpc.ts';
import { LITECOIN_NETWORK } from '../../src/chains/bitcoin/swap-wallet.ts';
import { scanUtxoSet } from '../../src/chains/bitcoin/utxo-scan.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { solanaSignerOfKey } from '../../src/chains/solana/keys.ts';
import { evmHexToTron } from '../../src/chains/tron/address.ts';
import { localnetRpc, signedTransaction } from './solana-localnet.ts';
import { until } from './wait.ts';

/** What the new user gets; each chain family only when asked. */
export interface DevnetUserFunds {
  /** Ether (gas) and WBTC on ethereum_localnet and arbitrum_localnet, base units of WBTC. */
  evmWbtc?: bigint;
  /** Litecoin, litoshis, confirmed. */
  litoshis?: bigint;
  /** SOL (lamports) and USDC (base units) on solana_localnet. */
  solana?: { lamports: bigint; usdc: bigint };
}

/** devnet.json, read as `hashlock dev` writes it. */
type DevnetJson = Record<string, any>;

/**
 * Creates a user with a new key on the devnet of `devnetDir`, funds it with `funds`, and returns a
 * directory whose devnet.json is the devnet's with this user (and `appKey`, when given, as its app).
 */
export async function devnetUser(devnetDir: string, funds: DevnetUserFunds, appKey?: string): Promise<string> {
  const devnet = JSON.parse(readFileSync(join(devnetDir, 'devnet.json'), 'utf8')) as DevnetJson;
  const key = generatePrivateKey();
  const evm = privateKeyToAccount(key);
  const keyBytes = hexToBytes(key.slice(2));
  const solana = await solanaSignerOfKey(key);
  const user = {
    address: evm.address,
    private_key: key,
    litecoin: { address: walletAddress(keyBytes, LITECOIN_NETWORK), x_only: xOnlyPublicKeyOf(keyBytes) },
    solana: { address: solana.address },
    tron: { address: evmHexToTron(evm.address) },
  };
  if (funds.evmWbtc !== undefined) {
    for (const chainKey of ['ethereum_localnet', 'arbitrum_localnet']) await fundEvm(devnet, chainKey, evm.address, funds.evmWbtc);
  }
  if (funds.litoshis !== undefined) await fundLitecoin(devnet, user.litecoin.address, funds.litoshis);
  if (funds.solana) await fundSolana(devnet, solana.address, funds.solana);
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-devnet-user-'));
  writeFileSync(join(dir, 'devnet.json'), JSON.stringify({ ...devnet, app_key: appKey ?? devnet.app_key, accounts: { ...devnet.accounts, user } }, null, 2));
  return dir;
}

/** 100 ether from anvil, and `wbtc` from the devnet's test user. */
async function fundEvm(devnet: DevnetJson, chainKey: string, to: Address, wbtc: bigint): Promise<void> {
  const entry = devnet.chains[chainKey] as { chain_id: number; rpc_url: string; contracts: Record<string, Address> };
  const chain = { id: entry.chain_id, name: chainKey, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [entry.rpc_url] } } };
  const reader = createPublicClient({ chain, transport: http(entry.rpc_url), pollingInterval: 100 });
  await reader.request({ method: 'anvil_setBalance' as never, params: [to, numberToHex(parseEther('100'))] as never });
  const wallet = createWalletClient({ account: privateKeyToAccount(devnet.accounts.user.private_key as Hex), chain, transport: http(entry.rpc_url) });
  const hash = await wallet.writeContract({ address: entry.contracts.wbtc!, abi: erc20Abi, functionName: 'transfer', args: [to, wbtc] });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`the WBTC transfer ${hash} on ${chainKey} failed`);
}

/** `value` from the node's wallet, waited for until it is in the UTXO set (mined: what a swap's funding spends). */
async function fundLitecoin(devnet: DevnetJson, to: string, value: bigint): Promise<void> {
  const chain = devnet.chains.litecoin_localnet as { rpc_url: string; rpc_cookie_file: string } | undefined;
  if (!chain) throw new Error('devnet.json has no litecoin_localnet');
  const rpc = bitcoinRpcFor({ url: chain.rpc_url, cookieFile: chain.rpc_cookie_file });
  await rpc.call('sendtoaddress', [to, `${value / 100_000_000n}.${(value % 100_000_000n).toString().padStart(8, '0')}`]);
  await until(
    `${value} litoshis confirmed to ${to}`,
    async () => ((await scanUtxoSet(rpc, [to])).reduce((sum, o) => sum + o.value, 0n) >= value ? true : undefined),
    60_000,
    200,
  );
}

/** SOL by airdrop, and USDC from the devnet's test user (who pays that transaction). */
async function fundSolana(devnet: DevnetJson, to: SolanaAddress, funds: { lamports: bigint; usdc: bigint }): Promise<void> {
  const chain = devnet.chains.solana_localnet as { rpc_url: string; mints: { usdc: SolanaAddress } } | undefined;
  if (!chain) throw new Error('devnet.json has no solana_localnet');
  const rpc = localnetRpc(chain.rpc_url);
  await rpc.requestAirdrop(to, lamports(funds.lamports)).send();
  const payer = await solanaSignerOfKey(devnet.accounts.user.private_key as Hex);
  const mint = chain.mints.usdc;
  const [source] = await findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ owner: to, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const instructions = [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, owner: to, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }),
    getTransferInstruction({ source, destination, authority: payer, amount: funds.usdc }),
  ];
  const { wire } = await signedTransaction(rpc, payer, instructions);
  await rpc.sendTransaction(wire, { encoding: 'base64' }).send();
  // What the swap tests read, at the commitment they read it.
  await until(
    `${funds.lamports} lamports and ${funds.usdc} USDC at ${to}`,
    async () => {
      const sol = (await rpc.getBalance(to, { commitment: 'confirmed' }).send()).value;
      const { value } = await rpc.getAccountInfo(destination, { encoding: 'base64', commitment: 'confirmed' }).send();
      const usdc = value ? Buffer.from(value.data[0], 'base64').readBigUInt64LE(64) : 0n;
      return sol >= funds.lamports && usdc >= funds.usdc ? true : undefined;
    },
    60_000,
    100,
  );
}
