import { systemClock, type Clock } from '../clock.ts';
import type { PriceSource } from './price-source.ts';

export interface HttpPriceFeedOptions {
  /** A CoinGecko-style endpoint: GET {url}?ids=a,b&vs_currencies=usd -> {"a":{"usd":1.0}}. */
  url: string;
  priceIds: readonly string[];
  refreshMs?: number;
  /** Prices older than this are not used: quoting on stale prices loses money. */
  maxAgeMs?: number;
  fetch?: typeof fetch;
  onError?: (error: unknown) => void;
  /** The time prices age by (default: the system clock). */
  clock?: Clock;
}

/** USD prices polled from an HTTP feed in the background; lookups never wait for the network. */
export class HttpPriceFeed implements PriceSource {
  private prices = new Map<string, number>();
  private updatedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  revision = 0;

  private readonly clock: Clock;

  constructor(private readonly options: HttpPriceFeedOptions) {
    this.clock = options.clock ?? systemClock;
  }

  usdPrice(priceId: string): number | undefined {
    if (this.clock.now() - this.updatedAt > (this.options.maxAgeMs ?? 300_000)) return undefined;
    return this.prices.get(priceId);
  }

  /** Fetches once now (resolving true on success), then keeps refreshing until `stop`. */
  async start(): Promise<boolean> {
    const ok = await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs ?? 30_000);
    this.timer.unref();
    return ok;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async refresh(): Promise<boolean> {
    try {
      const url = new URL(this.options.url);
      url.searchParams.set('ids', this.options.priceIds.join(','));
      url.searchParams.set('vs_currencies', 'usd');
      const response = await (this.options.fetch ?? fetch)(url, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`price feed answered ${response.status}`);
      const body = (await response.json()) as Record<string, { usd?: unknown } | undefined>;
      const next = new Map<string, number>();
      for (const id of this.options.priceIds) {
        const usd = body[id]?.usd;
        if (typeof usd === 'number' && Number.isFinite(usd) && usd > 0) next.set(id, usd);
      }
      const changed = next.size !== this.prices.size || [...next].some(([id, p]) => this.prices.get(id) !== p);
      this.prices = next;
      this.updatedAt = this.clock.now();
      if (changed) this.revision++;
      return true;
    } catch (error) {
      this.options.onError?.(error);
      return false;
    }
  }
}
