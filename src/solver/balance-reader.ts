import { createPublicClient, erc20Abi, http, type Address, type PublicClient } from 'viem';
import type { Registry } from '../chains/registry.ts';
import type { ChainAccessConfig, SolverConfig } from '../config/service-config.ts';
import type { Db } from '../store/database.ts';
import { setSolverBalance } from '../store/solvers.ts';
import { hexToBytes } from '@noble/curves/utils.js';
import { keyPathAddress } from '../chains/bitcoin/wallet-tx.ts';
import { confirmedBalance } from '../store/bitcoin-utxos.ts';

/**
 * Reads the solvers' on-chain balances of every active asset on the chains that have an RPC
 * configured, and records them for the liquidity read and the reservations. Returns how many it read.
 * EVM balances come from the node; a Bitcoin-family balance is the confirmed unspent outputs of the
 * solver's wallet (the key-path address of its x-only key) that the chain's watcher recorded.
 */
export class SolverBalanceReader {
  private readonly clients = new Map<string, PublicClient>();
  private readonly bitcoinChains = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly solvers: readonly SolverConfig[],
    chains: Record<string, ChainAccessConfig>,
  ) {
    for (const [key, access] of Object.entries(chains)) {
      if (access.rpc_url && registry.chain(key)?.family === 'evm') {
        this.clients.set(key, createPublicClient({ transport: http(access.rpc_url) }));
      }
      if (access.rpc_url && registry.chain(key)?.family === 'bitcoin') this.bitcoinChains.add(key);
    }
  }

  async refresh(): Promise<number> {
    let read = 0;
    for (const solver of this.solvers) {
      for (const [chainKey, address] of Object.entries(solver.addresses)) {
        const client = this.clients.get(chainKey);
        const chain = this.registry.chain(chainKey);
        if (chain && this.bitcoinChains.has(chainKey)) {
          const balance = await confirmedBalance(this.db, chainKey, keyPathAddress(hexToBytes(address.toLowerCase()), chain.network));
          for (const asset of chain.assets.filter((a) => a.isActive)) {
            await setSolverBalance(this.db, { solverId: solver.id, asset: asset.id, balance });
            read++;
          }
        }
        if (!client || !chain) continue;
        const blockNumber = await client.getBlockNumber();
        for (const asset of chain.assets.filter((a) => a.isActive)) {
          const balance =
            asset.token.schema === 'evm:native'
              ? await client.getBalance({ address: address as Address, blockNumber })
              : await client.readContract({
                  address: asset.token.address as Address,
                  abi: erc20Abi,
                  functionName: 'balanceOf',
                  args: [address as Address],
                  blockNumber,
                });
          await setSolverBalance(this.db, { solverId: solver.id, asset: asset.id, balance, blockNumber });
          read++;
        }
      }
    }
    return read;
  }
}
