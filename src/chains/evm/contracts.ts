import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Abi, Hex } from 'viem';
import { PACKAGE_ROOT } from '../../config/service-config.ts';
import { compileSolidity } from '../solidity-htlc/solc.ts';

export interface ContractArtifact {
  abi: Abi;
  bytecode: Hex;
}

export const CONTRACTS_DIR = resolve(PACKAGE_ROOT, 'contracts');
const CACHE_PATH = resolve(PACKAGE_ROOT, '.build/contracts.json');

const require = createRequire(import.meta.url);

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
};

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

/**
 * The contracts of contracts/*.sol compiled with solc-js, by contract name. Compiled once and
 * cached in .build/ under a hash of the sources, the compiler version and the settings.
 */
export function contractArtifacts(): Record<string, ContractArtifact> {
  // The cache is keyed by the compiler's package version: loading solc itself costs 120 MB of memory.
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const sources = Object.fromEntries(
    readdirSync(CONTRACTS_DIR)
      .filter((f) => f.endsWith('.sol'))
      .sort()
      .map((f) => [f, { content: readFileSync(join(CONTRACTS_DIR, f), 'utf8') }]),
  );
  const key = createHash('sha256').update(JSON.stringify({ sources, version: solcVersion, SETTINGS })).digest('hex');
  if (existsSync(CACHE_PATH)) {
    const cached = JSON.parse(readFileSync(CACHE_PATH, 'utf8')) as { key: string; artifacts: Record<string, ContractArtifact> };
    if (cached.key === key) return cached.artifacts;
  }
  const output = compileSolidity({ language: 'Solidity', sources, settings: SETTINGS }, CONTRACTS_DIR) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const artifacts: Record<string, ContractArtifact> = {};
  for (const file of Object.keys(sources)) {
    for (const [name, contract] of Object.entries(output.contracts?.[file] ?? {})) {
      if (contract.evm.bytecode.object === '') continue; // interfaces and abstract contracts
      artifacts[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  mkdirSync(dirname(CACHE_PATH), { recursive: true });
  writeFileSync(CACHE_PATH, JSON.stringify({ key, artifacts }));
  return artifacts;
}

export function contractArtifact(name: string): ContractArtifact {
  const artifact = contractArtifacts()[name];
  if (!artifact) throw new Error(`no contract ${name} in ${CONTRACTS_DIR}`);
  return artifact;
}
