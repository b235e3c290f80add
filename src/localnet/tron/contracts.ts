import { loadArtifact, type ContractArtifact } from '../../chains/solidity-htlc/artifacts.ts';

/** The shipped TVM artifact of the Tron HTLC, or of the test token the local Tron chain deploys as its USDT. */
export const tronContractArtifact = (name: 'TronHTLC' | 'TestToken'): ContractArtifact => loadArtifact('tron', name);
