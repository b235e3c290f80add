import type { Registry } from '../chains/registry.ts';
import type { Clock } from '../clock.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import { HttpPriceFeed } from './http-price-feed.ts';
import { StaticPriceSource, type PriceSource } from './price-source.ts';

/**
 * The prices a config names: its HTTP feed (fetched once before this resolves, then polled in the
 * background until `stop`), else its static `prices`. The service and `hashlock solver` price with it.
 */
export async function startPriceSource(config: ServiceConfig, registry: Registry, clock: Clock): Promise<{ prices: PriceSource; stop: () => void }> {
  if (!config.priceFeed) return { prices: new StaticPriceSource(config.prices), stop: () => undefined };
  const feed = new HttpPriceFeed({
    url: config.priceFeed.url,
    priceIds: [...new Set(registry.assets.map((a) => a.priceId))],
    refreshMs: config.priceFeed.refresh_ms,
    maxAgeMs: config.priceFeed.max_age_ms,
    clock,
  });
  await feed.start();
  return { prices: feed, stop: () => feed.stop() };
}
