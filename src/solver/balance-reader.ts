import type { ChainRuntime } from '../chains/adapter.ts';
import type { Registry } from '../chains/registry.ts';
import type { SolverConfig } from '../config/service-config.ts';
import type { Db } from '../store/database.ts';
import { listSolvers } from '../store/solver-registry.ts';
import { setSolverBalance } from '../store/solvers.ts';

/**
 * Reads the solvers' on-chain balances of every active asset on the chains the service works, and
 * records them for the liquidity read and the reservations: the config's solvers at their configured
 * addresses, and the active registered solvers at their proven ones. Returns how many it read. How a
 * balance is read is the chain family's (its runtime's `balances`).
 */
export class SolverBalanceReader {
  constructor(
    private readonly db: Db,
    private readonly registry: Registry,
    private readonly solvers: readonly SolverConfig[],
    private readonly runtimes: ReadonlyMap<string, ChainRuntime>,
  ) {}

  async refresh(): Promise<number> {
    let read = 0;
    const registered = (await listSolvers(this.db))
      .filter((s) => s.registered && s.active && !s.revoked)
      .map((s) => ({ id: s.id, addresses: Object.fromEntries(s.addresses.map((a) => [a.chain, a.address])) }));
    for (const solver of [...this.solvers, ...registered]) {
      for (const [chainKey, party] of Object.entries(solver.addresses)) {
        const runtime = this.runtimes.get(chainKey);
        const chain = this.registry.chain(chainKey);
        if (!runtime || !chain) continue;
        for (const { asset, balance, blockNumber } of await runtime.balances(party, chain.assets.filter((a) => a.isActive))) {
          await setSolverBalance(this.db, { solverId: solver.id, asset: asset.id, balance, ...(blockNumber !== undefined ? { blockNumber } : {}) });
          read++;
        }
      }
    }
    return read;
  }
}
