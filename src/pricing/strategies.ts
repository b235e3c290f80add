import type { Asset, Registry } from '../chains/registry.ts';
import { ConfigError } from '../config/schema-check.ts';
import type { SolverConfig, StrategyConfig } from '../config/service-config.ts';

/** A solver's terms for one pair. */
export interface Strategy {
  solverId: string;
  from: Asset;
  to: Asset;
  feeBips: number;
  /** USD deducted per swap, in micro-dollars. */
  fixedFeeMicroUsd: bigint;
  /** The fixed fee as configured, shown as the quote's `fixed_fee`. */
  fixedFeeUsd: string;
  spreadBips: number;
  minAmount: bigint;
  maxAmount: bigint;
  estimatedTime: number;
}

const list = (v: string | string[]): string[] => (Array.isArray(v) ? v : [v]);

/** The source amounts a strategy takes: its own bounds within the source asset's. */
export function sourceRange(s: Strategy): { min: bigint; max: bigint } {
  return {
    min: s.minAmount > s.from.minAmount ? s.minAmount : s.from.minAmount,
    max: s.maxAmount < s.from.maxAmount ? s.maxAmount : s.from.maxAmount,
  };
}

/** `"0.5"` -> 500000n micro-dollars */
export function microUsd(decimal: string): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
}

/**
 * Seconds a swap takes: the source's confirmations, then the destination's initiation and redeem,
 * each one block of its chain, plus the service's own reaction time.
 */
function defaultEstimatedTime(from: Asset, to: Asset): number {
  const source = from.chain.blockTimeMs * Math.max(1, from.chain.confirmationTarget);
  return Math.ceil((source + 2 * to.chain.blockTimeMs) / 1000) + 5;
}

/**
 * The terms a registered solver's firm answer is shown and matched with: its price is all in the
 * answered amounts (no fee, spread or fixed fee on top), within the source asset's bounds.
 */
export function answerStrategy(solverId: string, from: Asset, to: Asset): Strategy {
  return {
    solverId,
    from,
    to,
    feeBips: 0,
    fixedFeeMicroUsd: 0n,
    fixedFeeUsd: '0',
    spreadBips: 0,
    minAmount: from.minAmount,
    maxAmount: from.maxAmount,
    estimatedTime: defaultEstimatedTime(from, to),
  };
}

/** Expands the configured strategies into one per (solver, from, to), checked against the registry. */
export function buildStrategies(configs: readonly StrategyConfig[], solvers: readonly SolverConfig[], registry: Registry): Strategy[] {
  const solverIds = new Set(solvers.map((s) => s.id));
  const seen = new Set<string>();
  const strategies: Strategy[] = [];
  configs.forEach((c, i) => {
    const where = `config: strategies[${i}]`;
    if (!solverIds.has(c.solver)) throw new ConfigError(`${where}.solver: no solver ${c.solver}`);
    const solver = solvers.find((s) => s.id === c.solver)!;
    const assetsOf = (ids: string | string[], field: string) =>
      list(ids).map((id) => {
        const asset = registry.asset(id);
        if (!asset) throw new ConfigError(`${where}.${field}: no asset ${id} in the registry`);
        if (!(asset.chain.key in solver.addresses)) {
          throw new ConfigError(`${where}.${field}: solver ${c.solver} has no address on ${asset.chain.key}`);
        }
        return asset;
      });
    const froms = assetsOf(c.from, 'from');
    const tos = assetsOf(c.to, 'to');
    if ((c.min_amount !== undefined || c.max_amount !== undefined) && froms.length !== 1) {
      throw new ConfigError(`${where}.min_amount: amounts are in base units of one source asset; list one asset in from`);
    }
    for (const from of froms) {
      for (const to of tos) {
        if (from.id === to.id) continue;
        const key = `${c.solver}|${from.id}|${to.id}`;
        if (seen.has(key)) throw new ConfigError(`${where}: solver ${c.solver} already has a strategy for ${from.id} -> ${to.id}`);
        seen.add(key);
        const minAmount = c.min_amount !== undefined ? BigInt(c.min_amount) : from.minAmount;
        const maxAmount = c.max_amount !== undefined ? BigInt(c.max_amount) : from.maxAmount;
        if (minAmount > maxAmount) throw new ConfigError(`${where}.min_amount: is greater than max_amount`);
        strategies.push({
          solverId: c.solver,
          from,
          to,
          feeBips: c.fee_bips,
          fixedFeeMicroUsd: microUsd(c.fixed_fee_usd ?? '0'),
          fixedFeeUsd: c.fixed_fee_usd ?? '0',
          spreadBips: c.spread_bips ?? 0,
          minAmount,
          maxAmount,
          estimatedTime: c.estimated_time ?? defaultEstimatedTime(from, to),
        });
      }
    }
  });
  return strategies;
}
