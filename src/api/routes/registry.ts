import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiVersion, Asset, Chain } from '../../chains/registry.ts';
import { invalid } from '../../errors.ts';
import type { PriceSource } from '../../pricing/price-source.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';

/** A query parameter (`asset`, or `from` on /v2/chains) filtering by asset id; its allowed values are the ones the version lists. */
const assetFilter = (ids: string[], version: ApiVersion, name = 'asset') =>
  Type.Object(
    {
      [name]: Type.Optional(
        Type.String({ enum: ids, description: `Only this asset (one of the ${version} asset ids)` }),
      ),
    },
    { additionalProperties: false },
  );

function assetView(asset: Asset, prices: PriceSource) {
  return {
    id: asset.id,
    name: asset.name,
    chain: asset.chain.id,
    icon: asset.icon,
    htlc: asset.htlc,
    token: asset.token,
    decimals: asset.decimals,
    min_amount: asset.minAmount.toString(),
    max_amount: asset.maxAmount.toString(),
    price: prices.usdPrice(asset.priceId) ?? 0,
  };
}

/** A chain with the given assets: v3 marks each asset with `is_active`, v2 adds the chain's `display`. */
function chainView(chain: Chain, assets: Asset[], prices: PriceSource, version: ApiVersion) {
  return {
    chain: chain.key,
    name: chain.name,
    ...(version === 'v2' ? { display: chain.name } : {}),
    id: chain.id,
    native_asset_id: chain.nativeAssetId,
    icon: chain.icon,
    explorer_url: chain.explorerUrl,
    confirmation_target: chain.confirmationTarget,
    source_timelock: String(chain.sourceTimelock),
    destination_timelock: String(chain.destinationTimelock),
    supported_htlc_schemas: chain.htlcSchemas,
    supported_token_schemas: chain.tokenSchemas,
    is_active: chain.isActive,
    assets: assets.map((a) => (version === 'v3' ? { ...assetView(a, prices), is_active: a.isActive } : assetView(a, prices))),
  };
}

/** The version's listed assets of each chain, filtered; v2 lists only active ones. Chains left without assets are left out. */
function chainListing(registry: ApiContext['registry'], prices: PriceSource, version: ApiVersion, wanted: string | undefined) {
  return registry.chains
    .map((chain) => {
      const assets = chain.assets.filter(
        (a) => a.listedIn.has(version) && (version === 'v3' || a.isActive) && (wanted === undefined || a.id === wanted),
      );
      return assets.length > 0 ? chainView(chain, assets, prices, version) : undefined;
    })
    .filter((c) => c !== undefined);
}

/**
 * Remembers each serialized listing per filter until prices change: the registry is immutable, so
 * these responses are the same for every request in between.
 */
class ListingCache {
  private readonly bodies = new Map<string, string>();
  private revision: number;

  constructor(private readonly prices: PriceSource) {
    this.revision = prices.revision;
  }

  get(key: string, build: () => unknown): string {
    if (this.prices.revision !== this.revision) {
      this.bodies.clear();
      this.revision = this.prices.revision;
    }
    let body = this.bodies.get(key);
    if (body === undefined) {
      body = JSON.stringify({ status: 'Ok', result: build() });
      this.bodies.set(key, body);
    }
    return body;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function registryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry, prices, auth } = ctx;
  const v3Ids = registry.assetIdsListedIn('v3');
  const v2Ids = registry.assetIdsListedIn('v2');
  const listings = new ListingCache(prices);

  app.get<{ Querystring: { asset?: string } }>(
    '/v3/chains',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'List supported chains and their assets',
        description: 'Chains with the assets v3 lists, active or not. With `asset`, only that asset and its chain.',
        tags: ['chains'],
        querystring: assetFilter(v3Ids, 'v3'),
        response: { 200: Ok(Type.Array(Type.Ref('Chain'))), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const wanted = request.query.asset;
      const body = listings.get(`v3|${wanted ?? ''}`, () => chainListing(registry, prices, 'v3', wanted));
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.get<{ Querystring: { from?: string } }>(
    '/v2/chains',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'List supported chains and their assets (v2)',
        description:
          'Chains with their active v2 assets, without `is_active` on assets. The filter is `from`, as Garden names it: ' +
          'with it, only that asset and its chain (none when it is inactive).',
        tags: ['chains'],
        querystring: assetFilter(v2Ids, 'v2', 'from'),
        response: { 200: Ok(Type.Array(Type.Ref('ChainV2'))), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const wanted = request.query.from;
      const body = listings.get(`v2chains|${wanted ?? ''}`, () => chainListing(registry, prices, 'v2', wanted));
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.get<{ Querystring: { asset?: string; from?: string } }>(
    '/v2/assets',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'List supported assets',
        description:
          'The active assets v2 lists. With `from` (Garden\'s name) or `asset`, only that asset (none when it is inactive); ' +
          'both at once must name the same asset.',
        tags: ['chains'],
        querystring: Type.Composite([assetFilter(v2Ids, 'v2'), assetFilter(v2Ids, 'v2', 'from')], { additionalProperties: false }),
        response: { 200: Ok(Type.Array(Type.Ref('AssetV2'))), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { asset, from } = request.query;
      if (asset !== undefined && from !== undefined && asset !== from) throw invalid("invalid query parameter 'from': names another asset than 'asset'");
      const wanted = from ?? asset;
      const body = listings.get(`v2|${wanted ?? ''}`, () =>
        registry.assets
          .filter((a) => a.listedIn.has('v2') && a.isActive && (wanted === undefined || a.id === wanted))
          .map((a) => assetView(a, prices)),
      );
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.get<{ Querystring: { from?: string } }>(
    '/v3/assets',
    {
      onRequest: auth.onRequest,
      schema: {
        summary: 'List supported assets (v3)',
        description: 'The active assets v3 lists, each with `is_active`. The filter is `from`, as Garden names it: with it, only that asset.',
        tags: ['chains'],
        querystring: assetFilter(v3Ids, 'v3', 'from'),
        response: { 200: Ok(Type.Array(Type.Ref('AssetV3'))), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const wanted = request.query.from;
      const body = listings.get(`v3assets|${wanted ?? ''}`, () =>
        registry.assets
          .filter((a) => a.listedIn.has('v3') && a.isActive && (wanted === undefined || a.id === wanted))
          .map((a) => ({ ...assetView(a, prices), is_active: a.isActive })),
      );
      return reply.type(JSON_TYPE).send(body);
    },
  );
}
