// The localnet registry with the times a test only waits through shortened: blocks of the chains
// whose local node mines on a timer, and timelocks. What a swap does stays the same; a test passes
// the file to the service (its config's `registry`, or HASHLOCK_REGISTRY for `hashlock dev`).
// config/registry.localnet.json itself (`npm start`) is left as it is.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RegistryFile } from '../../src/chains/registry-schema.ts';
import { Registry, type Chain } from '../../src/chains/registry.ts';
import { LOCALNET_REGISTRY_PATH } from './fixtures.ts';

export interface ChainTimes {
  block_time_ms?: number;
  source_timelock?: number;
  destination_timelock?: number;
}

/** Times by chain key, over the localnet registry's. */
export type RegistryTimes = Readonly<Record<string, ChainTimes>>;

/**
 * Test block times: Litecoin regtest mines every 2 s (10 s in the dev registry) and Tron every 1 s
 * (3 s). Their timelocks are scaled so that each stays as long in seconds as in the dev registry.
 */
export const TEST_CHAIN_TIMES: RegistryTimes = {
  litecoin_localnet: { block_time_ms: 2_000, source_timelock: 300, destination_timelock: 60 },
  tron_localnet: { block_time_ms: 1_000, source_timelock: 600, destination_timelock: 150 },
};

/** The localnet registry with `TEST_CHAIN_TIMES`, and `times` over them. */
export function testRegistryFile(times: RegistryTimes = {}): RegistryFile {
  const registry = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as RegistryFile;
  for (const chain of registry.chains) Object.assign(chain, TEST_CHAIN_TIMES[chain.chain], times[chain.chain]);
  return registry;
}

/**
 * Writes the localnet registry with `TEST_CHAIN_TIMES`, and `times` over them, to `dir`; returns the
 * file's path.
 */
export function writeTestRegistry(dir: string, times: RegistryTimes = {}): string {
  const path = join(dir, 'registry.test.json');
  writeFileSync(path, JSON.stringify(testRegistryFile(times), null, 2));
  return path;
}

/** The registry `writeTestRegistry(dir, times)` writes, as the service loads it (its checks, rule 2's timelock order, included). */
export const loadTestRegistry = (times: RegistryTimes = {}): Registry => new Registry(testRegistryFile(times), 'the test registry');

/**
 * Every chain's timelocks at `source` and `destination` seconds, each in its own test blocks (a
 * whole number of them), for a world whose rule-2 window must be short: `destination` at most half
 * of `source`, as the registry's rule-2 check requires of every pair of chains.
 */
export function timelocksInSeconds(seconds: { source: number; destination: number }): RegistryTimes {
  return Object.fromEntries(
    testRegistryFile().chains.map((c) => {
      const blocks = (s: number) => {
        const n = (s * 1_000) / c.block_time_ms;
        assert.ok(Number.isInteger(n), `${s} s is not a whole number of ${c.chain}'s ${c.block_time_ms} ms blocks`);
        return n;
      };
      return [c.chain, { source_timelock: blocks(seconds.source), destination_timelock: blocks(seconds.destination) }];
    }),
  );
}

/**
 * Rule 2's window for swaps from `source` to `destination`, in ms, as src/solver/solver.ts reckons it
 * from the source's initiate block: the source timelock less the destination timelock and the margin.
 * Past it, the solver no longer funds the destination, and a funding not sent by then never is.
 */
export const rule2WindowMs = (source: Chain, destination: Chain, marginSeconds: number): number =>
  source.sourceTimelock * source.blockTimeMs - destination.destinationTimelock * destination.blockTimeMs - marginSeconds * 1_000;
