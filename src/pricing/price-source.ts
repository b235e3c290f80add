/** Where USD prices come from. Lookups are synchronous: a feed refreshes its prices in the background. */
export interface PriceSource {
  /** USD price of one whole unit of the asset with this price id, or undefined when unknown. */
  usdPrice(priceId: string): number | undefined;
  /** Changes whenever any price changes, so views built from prices know when to rebuild. */
  readonly revision: number;
}

/** Fixed prices from the config file: the offline default. */
export class StaticPriceSource implements PriceSource {
  private readonly prices: ReadonlyMap<string, number>;
  readonly revision = 0;

  constructor(prices: Record<string, number>) {
    this.prices = new Map(Object.entries(prices));
  }

  usdPrice(priceId: string): number | undefined {
    return this.prices.get(priceId);
  }
}
