import type { Asset } from '../chains/registry.ts';
import { AppError, shown } from '../errors.ts';
import type { PriceSource } from './price-source.ts';
import { RoutePolicy } from './route-policy.ts';
import { sourceRange, type Strategy } from './strategies.ts';

const BIPS = 10_000n;


export interface QuoteRequest {
  from: Asset;
  to: Asset;
  /** Exactly one of fromAmount and toAmount. */
  fromAmount?: bigint;
  toAmount?: bigint;
  /** Total affiliate fee in bips; it comes out of the destination amount. */
  affiliateFeeBips: number;
}

export interface SolverQuote {
  strategy: Strategy;
  sourceAmount: bigint;
  destinationAmount: bigint;
  sourcePrice: number;
  destinationPrice: number;
}

/** What a solver can still pay out of an asset: its balance minus what open orders hold. */
export type AvailableLiquidity = (assetId: string) => Promise<Map<string, bigint>>;

const microPrice = (usd: number): bigint => BigInt(Math.round(usd * 1e6));
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

interface Prices {
  source: bigint;
  destination: bigint;
}

/**
 * The destination amount a strategy pays for `sourceAmount`: converted at USD prices, less the
 * spread, the fee and affiliate bips, and the fixed USD fee. Rounded down: never more than priced.
 */
export function destinationAmount(s: Strategy, sourceAmount: bigint, prices: Prices, affiliateBips: number): bigint {
  const gross = (sourceAmount * prices.source * 10n ** BigInt(s.to.decimals)) / (prices.destination * 10n ** BigInt(s.from.decimals));
  const afterSpread = (gross * (BIPS - BigInt(s.spreadBips))) / BIPS;
  const afterFees = (afterSpread * (BIPS - BigInt(s.feeBips + affiliateBips))) / BIPS;
  const fixed = ceilDiv(s.fixedFeeMicroUsd * 10n ** BigInt(s.to.decimals), prices.destination);
  return afterFees - fixed;
}

/** The least source amount for which the strategy pays at least `wanted`. */
export function sourceAmountFor(s: Strategy, wanted: bigint, prices: Prices, affiliateBips: number): bigint {
  const fixed = ceilDiv(s.fixedFeeMicroUsd * 10n ** BigInt(s.to.decimals), prices.destination);
  const afterSpread = ceilDiv((wanted + fixed) * BIPS, BIPS - BigInt(s.feeBips + affiliateBips));
  const gross = ceilDiv(afterSpread * BIPS, BIPS - BigInt(s.spreadBips));
  let source = ceilDiv(gross * prices.destination * 10n ** BigInt(s.from.decimals), prices.source * 10n ** BigInt(s.to.decimals));
  // The floors of the forward formula can leave it a unit or so short.
  for (let i = 0; i < 1000 && destinationAmount(s, source, prices, affiliateBips) < wanted; i++) source++;
  return source;
}

/**
 * Prices pairs from the solvers' strategies, on the routes the route policy allows; the API's
 * `GET /v2/quote` and order creation use it.
 */
export class Quoter {
  constructor(
    private readonly strategies: readonly Strategy[],
    private readonly prices: PriceSource,
    private readonly available: AvailableLiquidity,
    readonly policy: RoutePolicy = RoutePolicy.open(),
    /** The solvers suspended from quoting now (`src/solver/solver-standing.ts`); none by default. */
    private readonly suspended: () => Promise<ReadonlySet<string>> = async () => new Set(),
  ) {}

  private strategiesFor(from: Asset, to: Asset): Strategy[] {
    return this.strategies.filter((s) => s.from.id === from.id && s.to.id === to.id);
  }

  /** The strategies of a route; refuses a pair no solver quotes, or one the route policy forbids. */
  routeStrategies(from: Asset, to: Asset): Strategy[] {
    const strategies = this.strategiesFor(from, to);
    if (strategies.length === 0) throw new AppError('no_route', `no order pair found for ${from.id} -> ${to.id}`);
    this.policy.check(from, to);
    return strategies;
  }

  /**
   * The strategies of a route whose solvers are not suspended; when every solver of the route is, a
   * `no_route` that says so (`solverId`: only that solver's, refused when it quotes none or is suspended).
   */
  async quotingStrategies(from: Asset, to: Asset, solverId?: string): Promise<Strategy[]> {
    let strategies = this.routeStrategies(from, to);
    if (solverId !== undefined) {
      strategies = strategies.filter((s) => s.solverId === solverId);
      if (strategies.length === 0) throw new AppError('no_route', `solver_id: solver ${shown(solverId)} does not quote ${from.id} -> ${to.id}`);
    }
    const suspended = await this.suspended();
    const quoting = strategies.filter((s) => !suspended.has(s.solverId));
    if (quoting.length === 0) {
      const ids = [...new Set(strategies.map((s) => s.solverId))].join(', ');
      throw new AppError('no_route', `no solver quotes ${from.id} -> ${to.id} now: suspended for leaving a funded source unfilled (${ids})`);
    }
    return quoting;
  }

  /** One quote per solver that can fill, best destination amount first; otherwise the reason why not. */
  async quote(req: QuoteRequest): Promise<SolverQuote[]> {
    const strategies = await this.quotingStrategies(req.from, req.to);
    const prices = this.pricesOf(req.from, req.to);
    const available = await this.available(req.to.id);
    const quotes: SolverQuote[] = [];
    let outOfRange: AppError | undefined;
    let short: AppError | undefined;
    for (const s of strategies) {
      const sourceAmount = req.fromAmount ?? sourceAmountFor(s, req.toAmount!, prices, req.affiliateFeeBips);
      const destination = req.toAmount ?? destinationAmount(s, sourceAmount, prices, req.affiliateFeeBips);
      const { min, max } = sourceRange(s);
      if (sourceAmount < min || sourceAmount > max || destination <= 0n) {
        outOfRange ??= new AppError('amount_out_of_range', `expected amount to be within the range of ${min} to ${max} (${req.from.id} base units)`);
        continue;
      }
      const left = available.get(s.solverId) ?? 0n;
      if (destination > left) {
        short ??= new AppError('insufficient_liquidity', `insufficient liquidity: at most ${left} ${req.to.id} base units available`);
        continue;
      }
      quotes.push({
        strategy: s,
        sourceAmount,
        destinationAmount: destination,
        sourcePrice: Number(prices.source) / 1e6,
        destinationPrice: Number(prices.destination) / 1e6,
      });
    }
    if (quotes.length === 0) throw (outOfRange ?? short)!;
    // Best for the client first: most received for a given amount, least paid for a wanted one.
    return quotes.sort((a, b) =>
      req.fromAmount !== undefined
        ? Number(b.destinationAmount - a.destinationAmount)
        : Number(a.sourceAmount - b.sourceAmount),
    );
  }

  pricesOf(from: Asset, to: Asset): Prices {
    const lookup = (asset: Asset): bigint => {
      const usd = this.prices.usdPrice(asset.priceId);
      const micro = usd === undefined ? 0n : microPrice(usd);
      if (micro <= 0n) throw new AppError('unavailable', `no current USD price for ${asset.id}`);
      return micro;
    };
    return { source: lookup(from), destination: lookup(to) };
  }
}

