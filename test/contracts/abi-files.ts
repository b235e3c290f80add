import { resolve } from 'node:path';
import type { Abi } from 'viem';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { tronContractArtifact } from '../../src/localnet/tron/contracts.ts';

/** The ABI files the service serves as contract schemas, and the contract each is compiled from. */
export const ABI_FILES = [
  { path: resolve(PACKAGE_ROOT, 'src/chains/evm/abi/HTLC.json'), contract: 'HTLC', tron: false },
  { path: resolve(PACKAGE_ROOT, 'src/chains/evm/abi/NativeHTLC.json'), contract: 'NativeHTLC', tron: false },
  { path: resolve(PACKAGE_ROOT, 'src/chains/tron/abi/TronHTLC.json'), contract: 'TronHTLC', tron: true },
] as const;

export function compiledAbi(file: (typeof ABI_FILES)[number]): Abi {
  return file.tron ? tronContractArtifact(file.contract).abi : contractArtifact(file.contract).abi;
}
