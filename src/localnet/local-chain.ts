// What `hashlock dev` and the tests ask of a family's local chain (src/localnet/<family>/): never part of
// the service's own import graph.
import type { Hex } from 'viem';
import type { ChainAccessConfig } from '../config/service-config.ts';
import type { Chain } from '../chains/registry.ts';

/** What `hashlock dev` asks of a family for one local chain. */
export interface FamilyDevnet {
  /** Starts the chain's local node (its state kept in the data directory) with what the dev service needs on it; a reason when it cannot. */
  start(chain: Chain, options: DevnetOptions): Promise<DevChain | { unavailable: string }>;
}

export interface DevnetOptions {
  dataDir: string;
  /** The dev accounts' keys: the same key is each role's on every chain. */
  keys: { solver: Hex; relayer: Hex; user: Hex; feeSigner: Hex };
  /** Milliseconds between blocks (the registry's block time by default); 0 mines only when asked. */
  blockTimeMs: number;
  /** Listen on the family's well-known local ports (Garden's local environment) where they are free; otherwise on free ones. */
  wellKnownPorts: boolean;
}

/** One local chain of `hashlock dev`, running. */
export interface DevChain {
  chain: Chain;
  /** The service's access to it (`chains.<key>` of the config). */
  access: ChainAccessConfig;
  /** Its entry under `chains` in devnet.json (RPC, chain id, contracts). */
  record: Record<string, unknown>;
  /** Fields of the accounts on this chain for devnet.json's `accounts.<role>`, when they differ from the EVM address. */
  accounts?: { user?: Record<string, unknown>; solver?: Record<string, unknown> };
  /** The line `hashlock dev` prints for it. */
  describe: string;
  /** What the operator should know of how it started (a well-known port that was taken, say). */
  notes?: string[];
  /** Gives the account of `key` what a solver needs here: gas money and the test tokens (where the family can). */
  fund?(key: Hex): Promise<void>;
  /** Moves the chain's clock `blocks` blocks (slots) on at once, where the local node can (tests of expiry). */
  advance?(blocks: number): void | Promise<void>;
  /**
   * Stops the chain's own clock until the returned function is called, where the local node can: a test
   * that needs nothing confirmed between two of its steps (a transaction, then a jump of `advance`).
   */
  hold?(): () => void;
  stop(): Promise<void>;
}
