// Tests of the Solana HTLC programs: the programs the repository ships (contracts/artifacts/solana/).
import { createHash, randomBytes } from 'node:crypto';
import type { SolanaJobPayload } from '../../src/chains/solana/jobs.ts';
import { solanaProgram, type SolanaProgramName } from '../../src/chains/solana/program-artifacts.ts';
import { loadRegistry } from '../../src/chains/registry.ts';
import { LOCALNET_REGISTRY_PATH } from './fixtures.ts';

export type BuiltPrograms = Record<SolanaProgramName, Uint8Array>;

/** Both programs as the repository ships them (contracts/artifacts/solana/): every machine has them, no compiler runs. */
export async function solanaProgramsForSuite(): Promise<BuiltPrograms> {
  return { native_swaps: solanaProgram('native_swaps'), spl_swaps: solanaProgram('spl_swaps') };
}

/** A job in which `payer` funds a SOL swap to `redeemer` on solana_localnet, as the solver funds a destination. */
export function solFundPayload(payer: string, redeemer: string, amount: bigint): SolanaJobPayload & { kind: 'initiate' } {
  const htlc = loadRegistry(LOCALNET_REGISTRY_PATH).asset('solana_localnet:sol')!.htlc.address;
  const secretHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  return { kind: 'initiate', program: htlc, programKind: 'native', initiator: payer, secretHash, redeemer, amount: amount.toString(), expiresInSlots: '1000' };
}
