// Tests of the Solana HTLC programs, which need clang-19 to build them. In CI (CI=true) a missing
// clang-19 fails the test; elsewhere the test skips with a loud message.
import { createHash, randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { SolanaJobPayload } from '../../src/chains/solana/jobs.ts';
import { buildProgram, type SolanaProgramName } from '../../src/localnet/solana/programs/build.ts';
import { loadRegistry } from '../../src/chains/registry.ts';
import { LOCALNET_REGISTRY_PATH } from './fixtures.ts';

export type BuiltPrograms = Record<SolanaProgramName, Uint8Array>;

/** Both programs built from contracts/solana, or undefined (and a loud warning) where clang-19 is missing outside CI. */
export async function solanaProgramsForSuite(): Promise<BuiltPrograms | undefined> {
  const native = await buildProgram('native_swaps');
  const spl = await buildProgram('spl_swaps');
  for (const built of [native, spl]) {
    if ('unavailable' in built) {
      if (process.env.CI) throw new Error(`cannot build the Solana programs: ${built.unavailable}; .ci/run installs clang-19`);
      console.warn(`\n!!! SKIPPED: cannot build the Solana programs: ${built.unavailable}\n`);
      return undefined;
    }
  }
  if ('unavailable' in native || 'unavailable' in spl) return undefined;
  return { native_swaps: native.bytes, spl_swaps: spl.bytes };
}

/** A job in which `payer` funds a SOL swap to `redeemer` on solana_localnet, as the solver funds a destination. */
export function solFundPayload(payer: string, redeemer: string, amount: bigint): SolanaJobPayload & { kind: 'initiate' } {
  const htlc = loadRegistry(LOCALNET_REGISTRY_PATH).asset('solana_localnet:sol')!.htlc.address;
  const secretHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  return { kind: 'initiate', program: htlc, programKind: 'native', initiator: payer, secretHash, redeemer, amount: amount.toString(), expiresInSlots: '1000' };
}

/** The same for one test: skips it (outside CI) when the programs cannot be built here. */
export async function solanaProgramsOrSkip(t: TestContext): Promise<BuiltPrograms | undefined> {
  const programs = await solanaProgramsForSuite();
  if (!programs) t.skip('clang-19 is not installed');
  return programs;
}
