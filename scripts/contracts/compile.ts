// The Solidity contracts compiled with solc-js into the artifacts the repository ships
// (contracts/artifacts/<target>/<Name>.json): for EVM chains (cancun) and for Tron's TVM (paris: no
// PUSH0, MCOPY or transient storage, which not every Tron network runs). `npm run build:contracts`
// writes them; test/contracts/artifacts.test.ts compiles again and compares.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { keccak256, type Abi, type Hex } from 'viem';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import type { ContractArtifact, SolidityTarget } from '../../src/chains/solidity-htlc/artifacts.ts';
import { compileSolidity } from './solc.ts';

export const CONTRACTS_DIR = resolve(PACKAGE_ROOT, 'contracts');

/** What each target compiles: the service's contracts and the test token and wallet the local chains deploy. */
const TARGETS: Record<SolidityTarget, { evmVersion: string; sources: string[] }> = {
  evm: { evmVersion: 'cancun', sources: ['FeeClaim.sol', 'HTLC.sol', 'NativeHTLC.sol', 'TestToken.sol', 'TestWallet.sol'] },
  tron: { evmVersion: 'paris', sources: ['tron/TronHTLC.sol', 'TestToken.sol'] },
};

interface SolcContract {
  abi: Abi;
  evm: { bytecode: { object: string }; deployedBytecode: { object: string; immutableReferences?: Record<string, Array<{ start: number; length: number }>> } };
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<string, Record<string, SolcContract>>;
}

const solcVersion = (): string => (createRequire(import.meta.url)('solc/package.json') as { version: string }).version;

/** Every artifact of `target`, by contract name (interfaces and abstract contracts have none). */
export function compileTarget(target: SolidityTarget): Record<string, ContractArtifact> {
  const { evmVersion, sources } = TARGETS[target];
  const settings = {
    optimizer: { enabled: true, runs: 200 },
    evmVersion,
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] } },
  };
  const input = Object.fromEntries(sources.map((f) => [f, { content: readFileSync(resolve(CONTRACTS_DIR, f), 'utf8') }]));
  const output = compileSolidity({ language: 'Solidity', sources: input, settings }, CONTRACTS_DIR) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const artifacts: Record<string, ContractArtifact> = {};
  for (const source of sources) {
    for (const [contract, compiled] of Object.entries(output.contracts?.[source] ?? {})) {
      if (compiled.evm.bytecode.object === '') continue;
      const deployedBytecode: Hex = `0x${compiled.evm.deployedBytecode.object}`;
      const immutableReferences = Object.values(compiled.evm.deployedBytecode.immutableReferences ?? {})
        .flat()
        .sort((a, b) => a.start - b.start);
      artifacts[contract] = {
        contract,
        source,
        target,
        compiler: `solc-js ${solcVersion()}, optimizer 200 runs, ${evmVersion}`,
        abi: compiled.abi,
        bytecode: `0x${compiled.evm.bytecode.object}`,
        deployedBytecode,
        immutableReferences,
        // solc leaves immutable ranges zero in the runtime code it outputs: this is the hash of any deployment, masked.
        codeHash: keccak256(deployedBytecode),
      };
    }
  }
  return artifacts;
}

export const SOLIDITY_TARGETS = Object.keys(TARGETS) as SolidityTarget[];

/** Every Solidity artifact the repository ships, by its path under contracts/artifacts/. */
export function compileArtifacts(): Map<string, ContractArtifact> {
  const all = new Map<string, ContractArtifact>();
  for (const target of SOLIDITY_TARGETS) {
    for (const [contract, artifact] of Object.entries(compileTarget(target))) all.set(`${target}/${contract}.json`, artifact);
  }
  return all;
}
