import { loadArtifact, type ContractArtifact } from '../solidity-htlc/artifacts.ts';

export type { ContractArtifact };

/** The shipped EVM artifact of a contract of contracts/ (HTLC, NativeHTLC, FeeClaim, TestToken, TestWallet). */
export const contractArtifact = (name: string): ContractArtifact => loadArtifact('evm', name);
