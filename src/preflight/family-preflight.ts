import type { Hex } from 'viem';
import { safeErrorText } from '../errors.ts';
import type { Asset, Chain } from '../chains/registry.ts';
import type { ChainAccessConfig } from '../config/service-config.ts';

export type CheckStatus = 'ok' | 'warn' | 'error';

/** One line of `hashlock preflight`'s table. */
export interface CheckRow {
  /** A chain key, or `database`, `config`, `keys`. */
  scope: string;
  /** What was checked: `node`, `chain id`, `code <asset>`, `decimals <asset>`, `balance relayer`, `clock`, ... */
  check: string;
  status: CheckStatus;
  detail: string;
}

/** Minimum balances the config sets for a chain (`chains.<key>.minimum_balances`), in base units. */
export interface MinimumBalances {
  /** The relayer's native balance, which pays gasless actions. */
  relayer?: bigint;
  /** The solver's native balance, which pays its fundings and redeems. */
  solver?: bigint;
  /** The solver's inventory per asset id (`<chain>:<symbol>`), what it funds destinations with. */
  inventory: ReadonlyMap<string, bigint>;
}

/** What a family's checks of one chain get. */
export interface PreflightContext {
  chain: Chain;
  access: ChainAccessConfig;
  /** The keys this instance holds; a role without one is checked through its configured address, if any. */
  keys: { relayer?: Hex; solver?: Hex };
  /** The solver's address on this chain from the config (`solvers[].addresses`), when the key is elsewhere. */
  solverAddress?: string;
  minimums: MinimumBalances;
  /** Now, in ms since the epoch (the local clock, which the chain's block times are held against). */
  now: number;
}

/**
 * A family's checks of one chain, read through its public API: the node answers and serves the
 * registry's chain; each HTLC contract or program at its address has the artifact's code; each token
 * has the registry's decimals; the relayer's and the solver's balances reach their minimums; the latest
 * block's time agrees with the local clock. A failed read is a row with status `error`, never a throw.
 */
export type FamilyPreflight = (ctx: PreflightContext) => Promise<CheckRow[]>;

/**
 * The local clock against the chain's latest block time: a block from the future means the local clock
 * is behind (timelocks in seconds would be misjudged), beyond what the chain's own rules let a block's time
 * run ahead (`futureToleranceSeconds`); a latest block much older than the block time means the chain (or
 * the node) has stalled, or the local clock is ahead.
 */
export function clockRow(chain: Chain, latestBlockSeconds: number, now: number, futureToleranceSeconds = 60): CheckRow {
  const aheadSeconds = Math.round(now / 1000 - latestBlockSeconds);
  const stalledAfter = Math.max(300, Math.round((chain.blockTimeMs * 10) / 1000));
  if (aheadSeconds < -futureToleranceSeconds) {
    return { scope: chain.key, check: 'clock', status: 'error', detail: `the latest block is ${-aheadSeconds} s ahead of the local clock: set the clock right (NTP)` };
  }
  if (aheadSeconds > stalledAfter) {
    return { scope: chain.key, check: 'clock', status: 'warn', detail: `the latest block is ${aheadSeconds} s old (over ${stalledAfter} s): the node is behind or the local clock is ahead` };
  }
  return { scope: chain.key, check: 'clock', status: 'ok', detail: `latest block ${aheadSeconds} s old` };
}

/** A balance against its minimum (none set: ok, shown). */
export function balanceRow(chain: Chain, check: string, balance: bigint, minimum: bigint | undefined, unit: string): CheckRow {
  if (minimum !== undefined && balance < minimum) {
    return { scope: chain.key, check, status: 'error', detail: `${balance} ${unit}, under the minimum ${minimum}` };
  }
  return { scope: chain.key, check, status: 'ok', detail: `${balance} ${unit}${minimum !== undefined ? ` (minimum ${minimum})` : ''}` };
}

/** Runs a check that reads the chain; its failure becomes an error row naming what failed. */
export async function checked(scope: string, check: string, read: () => Promise<CheckRow | CheckRow[]>): Promise<CheckRow[]> {
  try {
    const rows = await read();
    return Array.isArray(rows) ? rows : [rows];
  } catch (err) {
    // The first line only: a client's later lines repeat the request, whose URL may carry the node's API key.
    return [{ scope, check, status: 'error', detail: safeErrorText(err).split('\n')[0]!.slice(0, 300) }];
  }
}

/** The solver's inventory checks: each asset of `ctx.minimums.inventory` on this chain, its balance read by `held`. */
export function inventoryChecks(ctx: PreflightContext, held: (asset: Asset) => Promise<bigint>): Array<Promise<CheckRow[]>> {
  return [...ctx.minimums.inventory].flatMap(([assetId, minimum]) => {
    const asset = ctx.chain.assets.find((a) => a.id === assetId);
    if (!asset) return [];
    const check = `inventory ${asset.symbol}`;
    return [checked(ctx.chain.key, check, async () => balanceRow(ctx.chain, check, await held(asset), minimum, asset.symbol))];
  });
}
