import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { keccak256, type Abi, type Hex } from 'viem';
import { PACKAGE_ROOT } from '../../config/service-config.ts';

/** The instruction sets the Solidity contracts are compiled for: EVM chains (cancun) and Tron's TVM (paris). */
export type SolidityTarget = 'evm' | 'tron';

/**
 * A compiled contract as the repository ships it (contracts/artifacts/<target>/<Name>.json, written by
 * `npm run build:contracts`): no `hashlock` command runs a compiler.
 */
export interface ContractArtifact {
  contract: string;
  /** The source file under contracts/. */
  source: string;
  target: SolidityTarget;
  compiler: string;
  abi: Abi;
  /** Creation code. */
  bytecode: Hex;
  /** Runtime code as compiled: its immutables are zero until the constructor writes them. */
  deployedBytecode: Hex;
  /** Byte ranges of the runtime code the constructor fills with immutables (a token, a chain id, the contract's address). */
  immutableReferences: Array<{ start: number; length: number }>;
  /** keccak256 of the runtime code with its immutable ranges zeroed: the same for every deployment. */
  codeHash: Hex;
}

export const ARTIFACTS_DIR = resolve(PACKAGE_ROOT, 'contracts/artifacts');

export const artifactPath = (target: SolidityTarget, contract: string): string => resolve(ARTIFACTS_DIR, target, `${contract}.json`);

const loaded = new Map<string, ContractArtifact>();

/** The shipped artifact of `contract` compiled for `target`. */
export function loadArtifact(target: SolidityTarget, contract: string): ContractArtifact {
  const path = artifactPath(target, contract);
  let artifact = loaded.get(path);
  if (!artifact) {
    try {
      artifact = JSON.parse(readFileSync(path, 'utf8')) as ContractArtifact;
    } catch (err) {
      throw new Error(`no ${target} artifact of ${contract} at ${path}: ${(err as Error).message}`, { cause: err });
    }
    loaded.set(path, artifact);
  }
  return artifact;
}

/**
 * The code hash of runtime code as a chain holds it: keccak256 with the artifact's immutable ranges
 * zeroed, so that a deployment's own immutables do not change it. Equal to `artifact.codeHash` exactly
 * when the code is the artifact's.
 */
export function runtimeCodeHash(code: Hex, artifact: Pick<ContractArtifact, 'immutableReferences'>): Hex {
  const bytes = Buffer.from(code.slice(2), 'hex');
  for (const { start, length } of artifact.immutableReferences) {
    if (start + length <= bytes.length) bytes.fill(0, start, start + length);
  }
  return keccak256(bytes);
}
