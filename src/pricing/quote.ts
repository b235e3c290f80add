import type { Asset } from '../chains/registry.ts';
import { AppError, shown } from '../errors.ts';
import type { PriceSource } from './price-source.ts';
import { RoutePolicy } from './route-policy.ts';
import type { FirmAnswer, QuoteAsk, QuoteAuction } from './quote-auction.ts';
import { answerStrategy, sourceRange, type Strategy } from './strategies.ts';

const BIPS = 10_000n;


export interface QuoteRequest {
  from: Asset;
  to: Asset;
  /** Exactly one of fromAmount and toAmount. */
  fromAmount?: bigint;
  toAmount?: bigint;
  /** Total affiliate fee in bips; it comes out of the destination amount. */
  affiliateFeeBips: number;
  /**
   * A price to show, not to order at (`GET /v2/quote?indicative=true`): the in-process strategies alone,
   * whatever liquidity is left; registered solvers are not asked.
   */
  indicative?: boolean;
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

/** The operator's match-first rule: these registered solvers, highest rank first, may take the best price. */
export interface MatchFirst {
  solvers: readonly string[];
  /** How long they have to match it. */
  windowMs: number;
}

export interface QuoterOptions {
  policy?: RoutePolicy;
  /** The solvers suspended from quoting now, with why (`src/solver/solver-standing.ts`); none by default. */
  suspended?: () => Promise<ReadonlyMap<string, string>>;
  /** Quote requests to registered solvers; none: the in-process strategies alone. */
  auction?: QuoteAuction;
  matchFirst?: MatchFirst;
}

/** Who competes for a pair now: the in-process solvers' strategies and the connected registered solvers. */
export interface Competitors {
  strategies: Strategy[];
  /** Registered solvers to send the quote request to (`QuoteAuction.serving`). */
  external: string[];
}

/**
 * Prices pairs: from the in-process solvers' strategies and from the firm answers of the registered
 * solvers connected to the auction, on the routes the route policy allows. The API's `GET /v2/quote`,
 * `POST /v3/quote` and order creation use it.
 */
export class Quoter {
  private readonly policy: RoutePolicy;
  private readonly suspended: () => Promise<ReadonlyMap<string, string>>;
  readonly auction: QuoteAuction | undefined;
  private readonly matchFirstRule: MatchFirst | undefined;

  constructor(
    private readonly strategies: readonly Strategy[],
    private readonly prices: PriceSource,
    private readonly available: AvailableLiquidity,
    options: QuoterOptions = {},
  ) {
    this.policy = options.policy ?? RoutePolicy.open();
    this.suspended = options.suspended ?? (async () => new Map());
    this.auction = options.auction;
    this.matchFirstRule = options.matchFirst && options.matchFirst.solvers.length > 0 ? options.matchFirst : undefined;
  }

  /**
   * The strategies and registered solvers that compete for a route now, suspended solvers left out.
   * Refuses (`no_route`) a pair no solver serves, one the route policy forbids, and one whose every
   * solver is suspended, saying why; `solverId` restricts the competition to that solver.
   */
  async competitors(from: Asset, to: Asset, solverId?: string): Promise<Competitors> {
    let strategies = this.strategies.filter((s) => s.from.id === from.id && s.to.id === to.id);
    let external = this.auction?.serving(from, to) ?? [];
    if (strategies.length === 0 && external.length === 0) throw new AppError('no_route', `no order pair found for ${from.id} -> ${to.id}`);
    this.policy.check(from, to);
    if (solverId !== undefined) {
      strategies = strategies.filter((s) => s.solverId === solverId);
      external = external.filter((id) => id === solverId);
      if (strategies.length === 0 && external.length === 0) {
        throw new AppError('no_route', `solver_id: solver ${shown(solverId)} does not quote ${from.id} -> ${to.id}`);
      }
    }
    const suspended = await this.suspended();
    const quoting = { strategies: strategies.filter((s) => !suspended.has(s.solverId)), external: external.filter((id) => !suspended.has(id)) };
    if (quoting.strategies.length === 0 && quoting.external.length === 0) {
      const why = [...new Set([...strategies.map((s) => s.solverId), ...external])].map((id) => `${id}: ${suspended.get(id)}`).join('; ');
      throw new AppError('no_route', `no solver quotes ${from.id} -> ${to.id} now: suspended (${why})`);
    }
    return quoting;
  }

  /** The firm answers of the registered solvers asked, those in time (none without an auction). */
  async answers(ask: QuoteAsk, solverIds: readonly string[]): Promise<FirmAnswer[]> {
    return this.auction && solverIds.length > 0 ? this.auction.ask(ask, solverIds) : [];
  }

  /**
   * The operator's match-first window: when the best price is not a chosen solver's, the chosen ones
   * among `external` (connected and serving the pair) are asked to match it within the window; the
   * highest-ranked that answers at least as well takes it. Undefined when none does (or none applies).
   */
  async matchFirst(ask: QuoteAsk, best: { solverId: string; sourceAmount: bigint; destinationAmount: bigint }, external: readonly string[]): Promise<FirmAnswer | undefined> {
    const rule = this.matchFirstRule;
    if (!rule || !this.auction || rule.solvers.includes(best.solverId)) return undefined;
    const chosen = rule.solvers.filter((id) => external.includes(id));
    if (chosen.length === 0) return undefined;
    const answers = await this.auction.ask(ask, chosen, { match: best, windowMs: rule.windowMs });
    const matching = answers.filter((a) =>
      ask.sourceAmount !== undefined ? a.destinationAmount >= best.destinationAmount : a.sourceAmount <= best.sourceAmount,
    );
    return chosen.map((id) => matching.find((a) => a.solverId === id)).find((a) => a !== undefined);
  }

  /** One quote per solver that can fill, best destination amount first; otherwise the reason why not. */
  async quote(req: QuoteRequest): Promise<SolverQuote[]> {
    const { strategies, external } = await this.competitors(req.from, req.to);
    const prices = this.pricesOf(req.from, req.to);
    const ask: QuoteAsk = {
      from: req.from,
      to: req.to,
      ...(req.fromAmount !== undefined ? { sourceAmount: req.fromAmount } : { destinationAmount: req.toAmount! }),
      affiliateFeeBips: req.affiliateFeeBips,
      purpose: 'quote',
    };
    const [available, answers] = req.indicative
      ? [undefined, []]
      : await Promise.all([this.available(req.to.id), this.answers(ask, external)]);
    const priced = [
      ...strategies.map((s) => {
        const sourceAmount = req.fromAmount ?? sourceAmountFor(s, req.toAmount!, prices, req.affiliateFeeBips);
        return { strategy: s, sourceAmount, destination: req.toAmount ?? destinationAmount(s, sourceAmount, prices, req.affiliateFeeBips) };
      }),
      ...answers.map((a) => ({ strategy: answerStrategy(a.solverId, req.from, req.to), sourceAmount: a.sourceAmount, destination: a.destinationAmount })),
    ];
    let outOfRange: AppError | undefined;
    let short: AppError | undefined;
    const honoured = ({ strategy: s, sourceAmount, destination }: (typeof priced)[number]): SolverQuote | undefined => {
      const { min, max } = sourceRange(s);
      if (sourceAmount < min || sourceAmount > max || destination <= 0n) {
        outOfRange ??= new AppError('amount_out_of_range', `expected amount to be within the range of ${min} to ${max} (${req.from.id} base units)`);
        return undefined;
      }
      const left = available ? (available.get(s.solverId) ?? 0n) : destination;
      if (destination > left) {
        short ??= new AppError('insufficient_liquidity', `insufficient liquidity: at most ${left} ${req.to.id} base units available`);
        return undefined;
      }
      return { strategy: s, sourceAmount, destinationAmount: destination, sourcePrice: Number(prices.source) / 1e6, destinationPrice: Number(prices.destination) / 1e6 };
    };
    const answerEntry = (a: FirmAnswer) => ({ strategy: answerStrategy(a.solverId, req.from, req.to), sourceAmount: a.sourceAmount, destination: a.destinationAmount });
    const quotes = priced.map(honoured).filter((q) => q !== undefined);
    if (quotes.length === 0) throw outOfRange ?? short ?? noAnswer(req.from, req.to, this.auction);
    // Best for the client first: most received for a given amount, least paid for a wanted one.
    quotes.sort((a, b) =>
      req.fromAmount !== undefined ? Number(b.destinationAmount - a.destinationAmount) : Number(a.sourceAmount - b.sourceAmount),
    );
    const best = quotes[0]!;
    if (req.indicative) return quotes;
    const match = await this.matchFirst(ask, { solverId: best.strategy.solverId, sourceAmount: best.sourceAmount, destinationAmount: best.destinationAmount }, external);
    const matched = match && honoured(answerEntry(match));
    if (!matched) return quotes;
    return [matched, ...quotes.filter((q) => q.strategy.solverId !== matched.strategy.solverId)];
  }

  /**
   * The pairs the in-process strategies quote and the route policy allows, each with the widest source
   * range among them (`GET /v3/routes`); registered solvers' pairs are not listed.
   */
  routes(): Array<{ from: Asset; to: Asset; min: bigint; max: bigint }> {
    const pairs = new Map<string, { from: Asset; to: Asset; min: bigint; max: bigint }>();
    for (const s of this.strategies) {
      try {
        this.policy.check(s.from, s.to);
      } catch {
        continue;
      }
      const { min, max } = sourceRange(s);
      const key = `${s.from.id}|${s.to.id}`;
      const seen = pairs.get(key);
      pairs.set(key, seen ? { ...seen, min: min < seen.min ? min : seen.min, max: max > seen.max ? max : seen.max } : { from: s.from, to: s.to, min, max });
    }
    return [...pairs.values()];
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


/** The refusal when only registered solvers serve a pair and none answered in time. */
export function noAnswer(from: Asset, to: Asset, auction: QuoteAuction | undefined): AppError {
  return new AppError('no_route', `no solver answered a quote request for ${from.id} -> ${to.id} within ${auction?.deadlineMs ?? 0} ms`);
}
