/**
 * The keypairs of the local chain's fixed program ids, which the localnet registry names: `hashlock
 * dev` deploys the programs there through the shared loader steps (src/chains/solana/program-deploy.ts).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { address, createKeyPairSignerFromPrivateKeyBytes, type Address, type KeyPairSigner } from '@solana/kit';
import type { SolanaProgramName } from '../../../chains/solana/program-artifacts.ts';

/**
 * Seeds of the local chain's program keypairs: the ed25519 private key of each program is
 * sha256(seed), so the localnet program ids never change. Test and local use only: anyone can derive
 * these keys.
 */
export const LOCALNET_PROGRAM_KEY_SEEDS: Readonly<Record<SolanaProgramName, string>> = {
  native_swaps: 'hashlock localnet program key v1: solana_native_swaps',
  spl_swaps: 'hashlock localnet program key v1: solana_spl_swaps',
};

/** The localnet program ids, sha256(seed) public keys (pinned by a test against the derivation). */
export const LOCALNET_PROGRAM_IDS: Readonly<Record<SolanaProgramName, Address>> = {
  native_swaps: address('2JFnwHGRYz32BR9KdM9eG3DUUH5pxdACtaMSb9wKMWET'),
  spl_swaps: address('HSvrBfUC75yag4tFuSsBMSGirA7wqkWR7tP2QYGAPdNp'),
};

/** A local keypair whose ed25519 private key is sha256(seed): anyone can derive it, so local use only. */
export function keypairOfSeed(seed: string): Promise<KeyPairSigner> {
  return createKeyPairSignerFromPrivateKeyBytes(sha256(new TextEncoder().encode(seed)));
}

export function localnetProgramKeypair(name: SolanaProgramName): Promise<KeyPairSigner> {
  return keypairOfSeed(LOCALNET_PROGRAM_KEY_SEEDS[name]);
}
