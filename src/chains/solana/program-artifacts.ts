import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PACKAGE_ROOT } from '../../config/service-config.ts';

/** The project's two HTLC programs (contracts/solana/*.c): native SOL swaps and SPL token swaps. */
export type SolanaProgramName = 'native_swaps' | 'spl_swaps';
export const SOLANA_PROGRAMS: readonly SolanaProgramName[] = ['native_swaps', 'spl_swaps'];

/**
 * Where the repository ships a program as built (SBPFv0 ELF): clang-19 and the project's linker
 * built it (`npm run build:contracts`), so that deploying it needs neither;
 * test/chains/solana/programs/build.test.ts builds it again and compares the bytes.
 */
export const solanaProgramPath = (name: SolanaProgramName): string => resolve(PACKAGE_ROOT, 'contracts/artifacts/solana', `${name}.so`);

/** The shipped program's bytes. */
export function solanaProgram(name: SolanaProgramName): Uint8Array {
  return new Uint8Array(readFileSync(solanaProgramPath(name)));
}
