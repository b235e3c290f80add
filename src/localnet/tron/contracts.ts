import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Abi, Hex } from 'viem';
import { PACKAGE_ROOT } from '../../config/service-config.ts';
import { compileSolidity } from '../../chains/solidity-htlc/solc.ts';

export interface TronContractArtifact {
  abi: Abi;
  /** Creation code. */
  bytecode: Hex;
  /** Runtime code, its metadata included (immutables left zero). */
  deployedBytecode: Hex;
}

const CONTRACTS_DIR = resolve(PACKAGE_ROOT, 'contracts');
const CACHE_PATH = resolve(PACKAGE_ROOT, '.build/tron-contracts.json');
/** The Tron HTLC and the test token the local Tron chain deploys as its USDT. */
const SOURCES = ['tron/TronHTLC.sol', 'TestToken.sol'];

/** The TVM runs the paris instruction set: no PUSH0 (GreatVoyage 4.7.2 added it, not every network has it), MCOPY or transient storage. */
export const TVM_EVM_VERSION = 'paris';

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: TVM_EVM_VERSION,
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
}

const require = createRequire(import.meta.url);

/**
 * TronHTLC and TestToken compiled with solc-js for the TVM, by contract name; cached in .build/ under
 * a hash of the sources, the compiler version and the settings.
 */
export function tronContractArtifacts(): Record<string, TronContractArtifact> {
  // The cache is keyed by the compiler's package version: loading solc itself costs 120 MB of memory.
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const sources = Object.fromEntries(SOURCES.map((f) => [f, { content: readFileSync(join(CONTRACTS_DIR, f), 'utf8') }]));
  const key = createHash('sha256').update(JSON.stringify({ sources, version: solcVersion, SETTINGS })).digest('hex');
  if (existsSync(CACHE_PATH)) {
    const cached = JSON.parse(readFileSync(CACHE_PATH, 'utf8')) as { key: string; artifacts: Record<string, TronContractArtifact> };
    if (cached.key === key) return cached.artifacts;
  }
  const output = compileSolidity({ language: 'Solidity', sources, settings: SETTINGS }, CONTRACTS_DIR) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const artifacts: Record<string, TronContractArtifact> = {};
  for (const file of SOURCES) {
    for (const [name, contract] of Object.entries(output.contracts?.[file] ?? {})) {
      artifacts[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}`, deployedBytecode: `0x${contract.evm.deployedBytecode.object}` };
    }
  }
  mkdirSync(dirname(CACHE_PATH), { recursive: true });
  writeFileSync(CACHE_PATH, JSON.stringify({ key, artifacts }));
  return artifacts;
}

export function tronContractArtifact(name: 'TronHTLC' | 'TestToken'): TronContractArtifact {
  const artifact = tronContractArtifacts()[name];
  if (!artifact) throw new Error(`no contract ${name} among ${SOURCES.join(', ')}`);
  return artifact;
}
