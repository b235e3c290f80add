import { isAddress } from 'viem';
import type { Registry } from '../chains/registry.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { SolverConfig } from '../config/service-config.ts';

/** Checks that every solver address names a registry chain and, on EVM chains, is a valid address. */
export function checkSolvers(solvers: readonly SolverConfig[], registry: Registry, source: string): void {
  const ids = new Set<string>();
  solvers.forEach((solver, i) => {
    if (ids.has(solver.id)) throw new ConfigError(`${source}: solvers[${i}].id: duplicate solver id ${solver.id}`);
    ids.add(solver.id);
    for (const [chainKey, address] of Object.entries(solver.addresses)) {
      const field = `${source}: solvers[${i}].addresses.${chainKey}`;
      const chain = registry.chain(chainKey);
      if (!chain) throw new ConfigError(`${field}: no chain ${chainKey} in the registry`);
      if (chain.family === 'evm' && !isAddress(address, { strict: true })) {
        throw new ConfigError(`${field}: ${address} is not a valid EVM address (hex, EIP-55 checksum)`);
      }
    }
  });
}
