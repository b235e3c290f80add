import { chainAdapter, normalizeParty } from '../chains/adapters.ts';
import type { Registry } from '../chains/registry.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { SolverConfig } from '../config/service-config.ts';

/**
 * Checks that every solver address names a registry chain and is valid there: an address on
 * account chains, the x-only public key its HTLC scripts name on Bitcoin-family chains.
 */
export function checkSolvers(solvers: readonly SolverConfig[], registry: Registry, source: string): void {
  const ids = new Set<string>();
  solvers.forEach((solver, i) => {
    if (ids.has(solver.id)) throw new ConfigError(`${source}: solvers[${i}].id: duplicate solver id ${solver.id}`);
    ids.add(solver.id);
    for (const [chainKey, address] of Object.entries(solver.addresses)) {
      const field = `${source}: solvers[${i}].addresses.${chainKey}`;
      const chain = registry.chain(chainKey);
      if (!chain) throw new ConfigError(`${field}: no chain ${chainKey} in the registry`);
      if (normalizeParty(chain, address) === undefined) {
        throw new ConfigError(`${field}: ${address} is not ${chainAdapter(chain)?.partyDescription ?? `a party on ${chain.family} chains`}`);
      }
    }
  });
}
