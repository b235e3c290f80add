import { readFileSync } from 'node:fs';
import { isAddress } from 'viem';
import { checkSchema, ConfigError } from '../config/schema-check.ts';
import { deploymentPath, readDeployment, withDeployment } from '../deploy/deployment-file.ts';
import {
  CONTRACT_HTLC_SCHEMAS,
  RegistryFileSchema,
  type Family,
  type RegistryAsset,
  type RegistryChain,
  type RegistryFile,
} from './registry-schema.ts';

export type ApiVersion = 'v2' | 'v3';

export interface Asset {
  /** `<chain>:<symbol>` */
  readonly id: string;
  readonly chain: Chain;
  readonly symbol: string;
  readonly name: string;
  readonly icon: string;
  readonly decimals: number;
  readonly htlc: { readonly address: string; readonly schema: string };
  readonly token: { readonly address: string; readonly schema: string };
  readonly minAmount: bigint;
  readonly maxAmount: bigint;
  readonly priceId: string;
  readonly isActive: boolean;
  readonly listedIn: ReadonlySet<ApiVersion>;
}

export interface Chain {
  readonly key: string;
  readonly name: string;
  /** `<family>:<number>` */
  readonly id: string;
  readonly family: Family;
  /** Which network of its family the chain is (address formats, domains); '' for EVM chains. */
  readonly network: string;
  readonly nativeAssetId: string;
  readonly icon: string;
  readonly explorerUrl: string;
  readonly blockTimeMs: number;
  readonly confirmationTarget: number;
  readonly sourceTimelock: number;
  readonly destinationTimelock: number;
  readonly isActive: boolean;
  /** The FeeClaim contract the registry or its deployment file names, if any. */
  readonly feeClaim?: string;
  readonly assets: readonly Asset[];
  readonly htlcSchemas: readonly string[];
  readonly tokenSchemas: readonly string[];
}

/** The chains and assets the service knows, loaded once from a registry file and immutable after. */
export class Registry {
  readonly network: RegistryFile['network'];
  readonly chains: readonly Chain[];
  private readonly chainsByKey: ReadonlyMap<string, Chain>;
  private readonly assetsById: ReadonlyMap<string, Asset>;

  constructor(file: RegistryFile, source = 'registry', options: RegistryLoadOptions = {}) {
    this.network = file.network;
    this.chains = file.chains.map((c, i) => buildChain(c, `${source}: chains[${i}]`, options));
    this.chainsByKey = uniqueMap(this.chains, (c) => c.key, `${source}: duplicate chain key`);
    uniqueMap(this.chains, (c) => c.id, `${source}: duplicate chain id`);
    this.assetsById = uniqueMap(
      this.chains.flatMap((c) => c.assets),
      (a) => a.id,
      `${source}: duplicate asset`,
    );
    checkTimelockOrder(this.chains, source);
  }

  chain(key: string): Chain | undefined {
    return this.chainsByKey.get(key);
  }

  asset(id: string): Asset | undefined {
    return this.assetsById.get(id.toLowerCase());
  }

  get assets(): Asset[] {
    return [...this.assetsById.values()];
  }

  /** Asset ids an API version lists (and accepts as a filter value). */
  assetIdsListedIn(version: ApiVersion): string[] {
    return this.assets.filter((a) => a.listedIn.has(version)).map((a) => a.id);
  }
}

/**
 * The registry file at `path`, with the addresses `hashlock deploy` recorded in the deployment file
 * beside it in place of its empty ones.
 */
export function loadRegistry(path: string, options: RegistryLoadOptions = {}): Registry {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${path}: cannot read registry: ${(err as Error).message}`);
  }
  const file = checkSchema(RegistryFileSchema, raw, path);
  if (options.undeployed) return new Registry(file, path, { undeployed: true });
  return new Registry(withDeployment(file, readDeployment(path), deploymentPath(path)), path);
}

export interface RegistryLoadOptions {
  /**
   * The registry as written, without its deployment file and with active assets allowed to lack their
   * HTLC address: what `hashlock deploy` fills in.
   */
  undeployed?: boolean;
}

/** The networks a chain of each family may name; EVM chains are told apart by their chain id. */
export const NETWORKS: Partial<Record<Family, readonly string[]>> = {
  bitcoin: ['bitcoin', 'bitcoin_testnet', 'bitcoin_regtest', 'litecoin', 'litecoin_testnet', 'litecoin_regtest'],
  starknet: ['SN_MAIN', 'SN_SEPOLIA'],
  solana: ['mainnet', 'devnet', 'testnet', 'localnet'],
  tron: ['mainnet', 'nile', 'shasta', 'localnet'],
};

function buildChain(c: RegistryChain, where: string, options: RegistryLoadOptions): Chain {
  const family = c.id.slice(0, c.id.indexOf(':')) as Family;
  const networks = NETWORKS[family];
  if (networks && !networks.includes(c.network ?? '')) {
    throw new ConfigError(`${where}.network: a ${family} chain needs one of ${networks.join(', ')}`);
  }
  const chain: Chain = {
    key: c.chain,
    name: c.name,
    id: c.id,
    family,
    network: c.network ?? '',
    nativeAssetId: `${c.chain}:${c.native_asset}`,
    icon: c.icon,
    explorerUrl: c.explorer_url,
    blockTimeMs: c.block_time_ms,
    confirmationTarget: c.confirmation_target,
    sourceTimelock: c.source_timelock,
    destinationTimelock: c.destination_timelock,
    isActive: c.is_active,
    ...(c.fee_claim ? { feeClaim: c.fee_claim } : {}),
    assets: [],
    htlcSchemas: [...new Set(c.assets.map((a) => a.htlc.schema))],
    tokenSchemas: [...new Set(c.assets.map((a) => a.token.schema))],
  };
  (chain.assets as Asset[]).push(...c.assets.map((a, i) => buildAsset(chain, a, `${where}.assets[${i}]`, options)));
  return chain;
}

function buildAsset(chain: Chain, a: RegistryAsset, where: string, options: RegistryLoadOptions): Asset {
  for (const [field, schema] of [
    ['htlc.schema', a.htlc.schema],
    ['token.schema', a.token.schema],
  ] as const) {
    if (!schema.startsWith(`${chain.family}:`)) {
      throw new ConfigError(`${where}.${field}: ${schema} does not belong to the ${chain.family} family of ${chain.key}`);
    }
  }
  const minAmount = BigInt(a.min_amount);
  const maxAmount = BigInt(a.max_amount);
  if (minAmount > maxAmount) throw new ConfigError(`${where}.min_amount: is greater than max_amount`);
  if (a.is_active && !options.undeployed && CONTRACT_HTLC_SCHEMAS.has(a.htlc.schema) && a.htlc.address === '') {
    // `hashlock deploy` fills it in the deployment file beside the registry.
    throw new ConfigError(`${where}.htlc.address: an active asset needs its HTLC address (run hashlock deploy, which records it in the deployment file beside the registry)`);
  }
  if (a.is_active && !a.token.schema.endsWith(':native') && a.token.address === '') {
    throw new ConfigError(`${where}.token.address: an active token asset needs its token address`);
  }
  if (chain.family === 'evm') {
    for (const [field, address] of [
      ['htlc.address', a.htlc.address],
      ['token.address', a.token.address],
    ] as const) {
      if (address !== '' && !isAddress(address, { strict: true })) {
        throw new ConfigError(`${where}.${field}: ${address} is not a valid EVM address (hex, EIP-55 checksum)`);
      }
    }
  }
  return {
    id: `${chain.key}:${a.symbol}`,
    chain,
    symbol: a.symbol,
    name: a.name,
    icon: a.icon,
    decimals: a.decimals,
    htlc: { ...a.htlc },
    token: { ...a.token },
    minAmount,
    maxAmount,
    priceId: a.price_id,
    isActive: a.is_active,
    listedIn: new Set(a.listed_in),
  };
}

/**
 * Safety rule 2 at configuration time: any active chain's destination timelock, in seconds, must be
 * at most half of any other active chain's source timelock, so every route satisfies it.
 */
function checkTimelockOrder(chains: readonly Chain[], source: string): void {
  const active = chains.filter((c) => c.isActive);
  for (const dst of active) {
    for (const src of active) {
      if (src === dst) continue;
      const dstMs = dst.destinationTimelock * dst.blockTimeMs;
      const srcMs = src.sourceTimelock * src.blockTimeMs;
      if (dstMs * 2 > srcMs) {
        throw new ConfigError(
          `${source}: ${dst.key}.destination_timelock (${dstMs / 1000} s) is more than half of ` +
            `${src.key}.source_timelock (${srcMs / 1000} s)`,
        );
      }
    }
  }
}

function uniqueMap<T>(items: readonly T[], key: (item: T) => string, message: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (map.has(k)) throw new ConfigError(`${message} ${k}`);
    map.set(k, item);
  }
  return map;
}
