import { sha256 } from '@noble/hashes/sha2.js';
import {
  getAddressDecoder,
  getAddressEncoder,
  getProgramDerivedAddress,
  isOffCurveAddress,
  type Address,
} from '@solana/kit';

const PDA_MARKER = new TextEncoder().encode('ProgramDerivedAddress');
const MAX_SEED_BYTES = 32;
const MAX_SEEDS = 16;

export type Seed = Uint8Array;

/** The program address for `seeds` and its bump: kit's `getProgramDerivedAddress`, the canonical derivation. */
export async function findProgramAddress(programAddress: Address, seeds: readonly Seed[]): Promise<[Address, number]> {
  const [pda, bump] = await getProgramDerivedAddress({ programAddress, seeds: [...seeds] });
  return [pda, bump];
}

/**
 * The same derivation as `findProgramAddress`, synchronously: `FamilyHtlc.swapId` is synchronous,
 * and kit's version is async only because it hashes with WebCrypto. Bumps are tried from 255 down;
 * the first sha256(seeds ‖ bump ‖ program ‖ "ProgramDerivedAddress") that is off the ed25519
 * curve wins. Tests check it against kit for both programs' seeds.
 */
export function findProgramAddressSync(programAddress: Address, seeds: readonly Seed[]): [Address, number] {
  if (seeds.length >= MAX_SEEDS) throw new Error(`a program address takes at most ${MAX_SEEDS - 1} seeds besides the bump`);
  for (const seed of seeds) {
    if (seed.length > MAX_SEED_BYTES) throw new Error(`a program address seed is at most ${MAX_SEED_BYTES} bytes`);
  }
  const program = getAddressEncoder().encode(programAddress);
  const decoder = getAddressDecoder();
  for (let bump = 255; bump >= 0; bump--) {
    const hash = sha256(concatBytes([...seeds, Uint8Array.of(bump), Uint8Array.from(program), PDA_MARKER]));
    const candidate = decoder.decode(hash);
    if (isOffCurveAddress(candidate)) return [candidate, bump];
  }
  throw new Error('no program address found for these seeds');
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
