import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from '@sinclair/typebox';
import { DEFAULT_RATE_LIMITS, type Limit, type RateLimits } from '../api/rate-limit.ts';
import { RoutePolicy, type PolicyDefault, type RoutePolicyRules } from '../pricing/route-policy.ts';
import { DEFAULT_RULE2_MARGIN_SECONDS } from '../solver/solver.ts';
import { decryptKeyFile, KeyFileError, readKeyFileInfo, type KeyRole } from '../keys/key-file.ts';
import { requireKeyPassword } from '../keys/password.ts';
import { parseSecretKey } from '../orders/secret-box.ts';
import { checkSchema, ConfigError } from './schema-check.ts';

/** Root of the installed package (where config/ ships). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const SolverSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9_:.-]{1,128}$' }),
    name: Type.String({ minLength: 1 }),
    addresses: Type.Record(Type.String(), Type.String({ minLength: 1 }), {
      description: 'the solver address on each chain key it serves',
    }),
  },
  { additionalProperties: false },
);

const AssetList = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]);
const BaseUnits = Type.String({ pattern: '^[0-9]{1,78}$' });

const StrategySchema = Type.Object(
  {
    solver: Type.String({ minLength: 1 }),
    from: AssetList,
    to: AssetList,
    fee_bips: Type.Integer({ minimum: 0, maximum: 2000 }),
    fixed_fee_usd: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,6})?$' })),
    spread_bips: Type.Optional(Type.Integer({ minimum: 0, maximum: 2000 })),
    min_amount: Type.Optional(BaseUnits),
    max_amount: Type.Optional(BaseUnits),
    estimated_time: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

const PriceFeedSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://', description: 'CoinGecko-style /simple/price endpoint' }),
    refresh_ms: Type.Optional(Type.Integer({ minimum: 1000 })),
    max_age_ms: Type.Optional(Type.Integer({ minimum: 1000 })),
  },
  { additionalProperties: false },
);

/** How the transaction engine bumps a chain's transactions that are not mined in time. */
const FeeBumpSchema = Type.Object(
  {
    after_seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 86_400, description: 'EVM chains: a transaction not mined this long after it was signed is re-signed with fees up 12.5 %, same nonce (default 30)' }),
    ),
    after_blocks: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000, description: 'Bitcoin family: a transaction this many blocks in the mempool is bumped (default 2)' })),
    rounds: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Bitcoin family: at most this many bumps of one transaction (default 3)' })),
    max_fee_rate: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Bitcoin family: no bump pays above this, in sat/vB (default 200)' })),
    replace_by_fee: Type.Optional(
      Type.Boolean({ description: "Bitcoin family: whether the chain's nodes relay BIP125 replacements (default: Bitcoin yes, Litecoin no)" }),
    ),
  },
  { additionalProperties: false },
);

const ChainAccessSchema = Type.Object(
  {
    rpc_url: Type.Optional(Type.String({ pattern: '^https?://', description: 'JSON-RPC endpoint of the chain' })),
    ws_url: Type.Optional(
      Type.String({ pattern: '^wss?://', description: 'WebSocket JSON-RPC endpoint: the watcher reads each new block as the node announces it' }),
    ),
    poll_ms: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 3_600_000,
        description: "how often the chain's watcher reads the chain when nothing wakes it (new heads over ws_url, POST /v3/index), in ms (default: from the block time, at most a few seconds)",
      }),
    ),
    rpc_cookie_file: Type.Optional(
      Type.String({ minLength: 1, description: "Bitcoin-family chains: the node's .cookie file (else user:password in rpc_url)" }),
    ),
    relayer: Type.Optional(Type.String({ minLength: 1, description: 'the relayer account that pays gasless actions' })),
    max_fee_gwei: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,9}(\\.[0-9]{1,9})?$', description: 'EVM chains: the most the relayer pays per gas, in gwei (no cap by default)' }),
    ),
    fee_claim: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'the FeeClaim contract that pays affiliate fees on this chain' })),
    fee_bump: Type.Optional(FeeBumpSchema),
    api_key: Type.Optional(Type.String({ minLength: 1, description: "Tron chains: the node's API key, sent as TronGrid's TRON-PRO-API-KEY header" })),
    minimum_balances: Type.Optional(
      Type.Object(
        {
          relayer: Type.Optional(Type.String({ pattern: '^[0-9]{1,78}$', description: "the relayer's native balance, base units, under which preflight and /health report an error" })),
          solver: Type.Optional(Type.String({ pattern: '^[0-9]{1,78}$', description: "the solver's native balance for fees, base units" })),
          inventory: Type.Optional(
            Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), Type.String({ pattern: '^[0-9]{1,78}$' }), {
              description: "the solver's inventory per asset symbol of this chain, base units",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const KeyFile = (role: string) => Type.Optional(Type.String({ minLength: 1, description: `the ${role} key file` }));
const KeyFilesSchema = Type.Object(
  {
    relayer: KeyFile('relayer'),
    solver: KeyFile('solver'),
    fee_signer: KeyFile('fee signer'),
    deployer: KeyFile("deployer (hashlock deploy's)"),
    secret: KeyFile("secret-box key (it encrypts what the service holds for clients; HASHLOCK_SECRET_KEY's)"),
  },
  {
    additionalProperties: false,
    description:
      'encrypted key files (hashlock keys new|import), paths relative to this file, decrypted at start with HASHLOCK_KEY_PASSWORD or the file HASHLOCK_KEY_PASSWORD_FILE names; in place of the plaintext HASHLOCK_*_KEY variables',
  },
);

const LimitSchema = Type.Object(
  {
    max: Type.Integer({ minimum: 1, description: 'requests allowed per window' }),
    window_ms: Type.Integer({ minimum: 100, maximum: 86_400_000, description: 'the window, in milliseconds' }),
  },
  { additionalProperties: false },
);

const RateLimitSchema = Type.Union([
  Type.Literal(false, { description: 'no rate limits' }),
  Type.Object(
    {
      per_key: Type.Optional(LimitSchema),
      per_address: Type.Optional(LimitSchema),
    },
    { additionalProperties: false },
  ),
]);

const RuleListSchema = (description: string) => Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description }));

const RoutePolicySchema = Type.Object(
  {
    default: Type.Optional(
      Type.Unsafe<PolicyDefault>({ type: 'string', enum: ['open', 'closed'], description: 'routes no rule decides: open (allowed, the default) or closed' }),
    ),
    isolation_groups: RuleListSchema('assets that may only be swapped with the other side of their rule, e.g. "ethereum:SEED <-> arbitrum:SEED"'),
    blacklist_pairs: RuleListSchema('refused routes, e.g. "bitcoin:BTC -> starknet:*"'),
    whitelist_overrides: RuleListSchema('routes allowed although a blacklist rule matches them'),
  },
  { additionalProperties: false },
);

export const ServiceConfigSchema = Type.Object(
  {
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    host: Type.Optional(Type.String({ minLength: 1 })),
    data_dir: Type.Optional(Type.String({ minLength: 1 })),
    database_url: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
    database_pool_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'connections in the PostgreSQL pool' })),
    registry: Type.Optional(Type.String({ minLength: 1, description: 'path of the chain and asset registry file' })),
    log_level: Type.Optional(
      Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    ),
    prices: Type.Optional(
      Type.Record(Type.String(), Type.Number({ minimum: 0 }), {
        description: 'static USD prices by price_id, the offline price source',
      }),
    ),
    solvers: Type.Optional(Type.Array(SolverSchema)),
    strategies: Type.Optional(Type.Array(StrategySchema)),
    price_feed: Type.Optional(PriceFeedSchema),
    affiliate_fee_assets: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    chains: Type.Optional(Type.Record(Type.String(), ChainAccessSchema, { description: 'per chain key: how to reach it' })),
    key_files: Type.Optional(KeyFilesSchema),
    secret_public_key: Type.Optional(
      Type.String({
        pattern: '^[0-9a-fA-F]{64}$',
        description:
          "the public key secrets are sealed to (64 hex; the worker instances' start line prints it): an instance started with --role api holds it instead of the secret key, so it can seal secrets but not open them",
      }),
    ),
    order_cache_ms: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 3_600_000, description: 'safety bound on how long an order stays in the read cache (changes invalidate it at once); 0 turns the cache off' }),
    ),
    solver_fund_within_seconds: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 86_400,
        description:
          "how long a solver has to fund a destination once the source's confirmations could have arrived: funded later counts as late, and not funded by then suspends the solver from quoting until the operator restores it",
      }),
    ),
    solver_rule2_margin_seconds: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 86_400,
        description:
          "safety rule 2's margin: the solver funds a destination only while the source has more time left than the destination timelock plus this, and the funding must reach the chain by then (its broadcast deadline)",
      }),
    ),
    solver_match_first: Type.Optional(
      Type.Object(
        {
          solvers: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
            maxItems: 100,
            description: 'registered solver ids, highest rank first',
          }),
          window_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 5_000, description: 'how long they have to match (default 100)' })),
        },
        {
          additionalProperties: false,
          description: "registered solvers that may take the best price when another solver's answer is best: asked to match it within window_ms",
        },
      ),
    ),
    solver_quote_deadline_ms: Type.Optional(
      Type.Integer({
        minimum: 50,
        maximum: 5_000,
        description: 'how long registered solvers have to answer a quote request; a later answer is refused, and quotes and orders wait at most this long for answers',
      }),
    ),
    rate_limit: Type.Optional(RateLimitSchema),
    trust_proxy: Type.Optional(
      Type.Union([Type.Boolean(), Type.String({ minLength: 1 })], {
        description: "which proxies' X-Forwarded-For names the client address: true (any), or their addresses or CIDRs, comma-separated",
      }),
    ),
    route_policy: Type.Optional(RoutePolicySchema),
    event_streams: Type.Optional(
      Type.Object(
        {
          max_open: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'open event streams one instance accepts; more get 503 (default 10000)' }),
          ),
          max_public_per_address: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: 1_000_000,
              description: "open public streams (the explorer's, no API key) one client address may hold on one instance; more get 429 (default 50, 0 for none)",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    webhooks: Type.Optional(
      Type.Object(
        {
          allow_private_addresses: Type.Optional(
            Type.Boolean({ description: 'let apps register webhook URLs on loopback, private or link-local addresses (default false; the dev config allows them)' }),
          ),
          keep_deliveries_days: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 3650, description: 'days the delivery log keeps a delivery after it was delivered or given up (default 30)' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ServiceConfigFile = Static<typeof ServiceConfigSchema>;
export type SolverConfig = Static<typeof SolverSchema>;
export type StrategyConfig = Static<typeof StrategySchema>;
export type PriceFeedConfig = Static<typeof PriceFeedSchema>;
export type ChainAccessConfig = Static<typeof ChainAccessSchema>;

export interface ServiceConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Connections in the PostgreSQL pool (the API and every worker share it). */
  databasePoolSize: number;
  registryPath: string;
  logLevel: string;
  prices: Record<string, number>;
  solvers: SolverConfig[];
  strategies: StrategyConfig[];
  priceFeed: PriceFeedConfig | undefined;
  affiliateFeeAssets: string[];
  chains: Record<string, ChainAccessConfig>;
  /** Private keys, from key files (`key_files`) or the environment, never from the config file itself. `secret`: the secret box's key. */
  keys: { relayer?: `0x${string}`; solver?: `0x${string}`; feeSigner?: `0x${string}`; secret?: Uint8Array };
  /** Where each role's key comes from: a plaintext environment variable or an encrypted key file. */
  keySources: Partial<Record<KeyRole, 'env' | 'file'>>;
  /** The config's key files by role, absolute paths (the deployer's is decrypted by `hashlock deploy` alone). */
  keyFiles: Partial<Record<KeyRole, string>>;
  /** `secret_public_key`: what an API-only instance seals to. */
  secretPublicKey: Uint8Array | undefined;
  orderCacheMs: number;
  /** How long a solver has to fund a destination past the source's confirmations (src/store/solver-records.ts). */
  solverFundWithinSeconds: number;
  /** Safety rule 2's margin, in seconds: the service's solver and `hashlock solver` (src/solver/solver.ts `marginSeconds`). */
  solverRule2MarginSeconds: number;
  /** How long registered solvers have to answer a quote request (src/pricing/quote-auction.ts). */
  solverQuoteDeadlineMs: number;
  /** Registered solvers that may match the best price first (src/pricing/quote.ts `matchFirst`). */
  solverMatchFirst: { solvers: string[]; windowMs: number } | undefined;
  /** Request limits per app key and per client address; undefined when the file turns them off. */
  rateLimits: RateLimits | undefined;
  trustProxy: boolean | string;
  /** Which routes may be quoted and ordered (GET /v2/policy); rule syntax checked, chains checked at start. */
  routePolicy: RoutePolicyRules;
  /** Caps on open event streams per instance: all of them, and the public ones of one client address. */
  eventStreams: { maxStreams: number; maxPublicStreamsPerAddress: number };
  /** Whether webhook endpoints may be on non-public addresses. */
  webhooksAllowPrivateAddresses: boolean;
  /** Days the webhook delivery log keeps an ended delivery. */
  webhooksKeepDeliveriesDays: number;
}

export const DEFAULT_PORT = 4426;
/**
 * With 10, a burst of swaps kept the order reads of clients queued behind the workers' statements
 * (1,000 swaps at once: GET p99 184 ms; with 20, 120 ms).
 */
export const DEFAULT_DATABASE_POOL_SIZE = 20;
export const DEV_CONFIG_PATH = resolve(PACKAGE_ROOT, 'config/hashlock.dev.json');

/**
 * Reads a service config file (paths in it are relative to the file) and applies the environment
 * overrides: PORT, HOST, HASHLOCK_DATA_DIR, DATABASE_URL, HASHLOCK_REGISTRY, LOG_LEVEL.
 */
export interface LoadOptions {
  /**
   * Whether to read the keys (key files, HASHLOCK_*_KEY): false for an instance that holds none (`serve
   * --role api`) and for commands that sign nothing; `keys` is then empty, `keySources` says where they
   * would have come from.
   */
  keys?: boolean;
}

export function loadServiceConfig(path: string, env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): ServiceConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${path}: cannot read config: ${(err as Error).message}`);
  }
  const file = checkSchema(ServiceConfigSchema, raw, path);
  const base = dirname(resolve(path));
  const port = env.PORT !== undefined && env.PORT !== '' ? parsePort(env.PORT) : (file.port ?? DEFAULT_PORT);
  return {
    port,
    host: env.HOST || file.host || '127.0.0.1',
    dataDir: resolve(env.HASHLOCK_DATA_DIR || (file.data_dir ? resolve(base, file.data_dir) : '.data')),
    databaseUrl: env.DATABASE_URL || file.database_url,
    databasePoolSize: file.database_pool_size ?? DEFAULT_DATABASE_POOL_SIZE,
    registryPath: env.HASHLOCK_REGISTRY
      ? resolve(env.HASHLOCK_REGISTRY)
      : resolve(base, file.registry ?? 'registry.localnet.json'),
    logLevel: env.LOG_LEVEL || file.log_level || 'info',
    prices: file.prices ?? {},
    solvers: file.solvers ?? [],
    strategies: file.strategies ?? [],
    priceFeed: file.price_feed,
    affiliateFeeAssets: file.affiliate_fee_assets ?? [],
    chains: file.chains ?? {},
    ...configuredKeys(file.key_files ?? {}, base, env, options.keys ?? true),
    secretPublicKey: file.secret_public_key ? Buffer.from(file.secret_public_key, 'hex') : undefined,
    orderCacheMs: file.order_cache_ms ?? 60_000,
    solverFundWithinSeconds: file.solver_fund_within_seconds ?? 300,
    solverRule2MarginSeconds: file.solver_rule2_margin_seconds ?? DEFAULT_RULE2_MARGIN_SECONDS,
    solverQuoteDeadlineMs: file.solver_quote_deadline_ms ?? 300,
    solverMatchFirst: file.solver_match_first
      ? { solvers: file.solver_match_first.solvers, windowMs: file.solver_match_first.window_ms ?? 100 }
      : undefined,
    eventStreams: {
      maxStreams: file.event_streams?.max_open ?? 10_000,
      maxPublicStreamsPerAddress: file.event_streams?.max_public_per_address ?? 50,
    },
    webhooksAllowPrivateAddresses: file.webhooks?.allow_private_addresses ?? false,
    webhooksKeepDeliveriesDays: file.webhooks?.keep_deliveries_days ?? 30,
    rateLimits: file.rate_limit === false ? undefined : rateLimits(file.rate_limit ?? {}),
    trustProxy: file.trust_proxy ?? false,
    routePolicy: routePolicyRules(file.route_policy ?? {}, path),
  };
}

/** The policy with its defaults, each rule's form checked here (its chains need the registry, at start). */
function routePolicyRules(file: Partial<RoutePolicyRules>, path: string): RoutePolicyRules {
  const rules: RoutePolicyRules = {
    default: file.default ?? 'open',
    isolation_groups: file.isolation_groups ?? [],
    blacklist_pairs: file.blacklist_pairs ?? [],
    whitelist_overrides: file.whitelist_overrides ?? [],
  };
  new RoutePolicy(rules, { where: `${path}: route_policy` }); // parses every rule, throwing on the first bad one
  return rules;
}

function rateLimits(file: { per_key?: Static<typeof LimitSchema>; per_address?: Static<typeof LimitSchema> }): RateLimits {
  const limit = (given: Static<typeof LimitSchema> | undefined, fallback: Limit): Limit =>
    given ? { max: given.max, windowMs: given.window_ms } : fallback;
  return { perKey: limit(file.per_key, DEFAULT_RATE_LIMITS.perKey), perAddress: limit(file.per_address, DEFAULT_RATE_LIMITS.perAddress) };
}

/** Each role's key: its field under key_files and its plaintext environment variable. */
const KEY_SOURCES = [
  { role: 'relayer', field: 'relayer', variable: 'HASHLOCK_RELAYER_KEY' },
  { role: 'solver', field: 'solver', variable: 'HASHLOCK_SOLVER_KEY' },
  { role: 'fee-signer', field: 'fee_signer', variable: 'HASHLOCK_FEE_SIGNER_KEY' },
  { role: 'deployer', field: 'deployer', variable: 'HASHLOCK_DEPLOYER_KEY' },
  { role: 'secret', field: 'secret', variable: 'HASHLOCK_SECRET_KEY' },
] as const satisfies ReadonlyArray<{ role: KeyRole; field: keyof Static<typeof KeyFilesSchema>; variable: string }>;

/**
 * The keys from the config's key files (decrypted with the key password) or the environment; a role
 * with a key in both is refused. The deployer's file is only located here: `hashlock deploy` decrypts it.
 */
function configuredKeys(files: Static<typeof KeyFilesSchema>, base: string, env: NodeJS.ProcessEnv, read: boolean): Pick<ServiceConfig, 'keys' | 'keySources' | 'keyFiles'> {
  const keyFiles: ServiceConfig['keyFiles'] = {};
  const keySources: ServiceConfig['keySources'] = {};
  for (const { role, field, variable } of KEY_SOURCES) {
    const file = files[field];
    if (file !== undefined && env[variable]) {
      throw new ConfigError(`key_files.${field}: ${variable} is set too: a key comes from one place (unset ${variable}, or remove key_files.${field})`);
    }
    if (file !== undefined) {
      keyFiles[role] = resolve(base, file);
      keySources[role] = 'file';
    } else if (env[variable]) {
      keySources[role] = 'env';
    }
  }
  if (!read) return { keys: {}, keySources, keyFiles };
  const decrypting = KEY_SOURCES.some((s) => s.role !== 'deployer' && keyFiles[s.role]);
  const password = decrypting ? requireKeyPassword(env, 'key_files') : '';
  const signingKey = (role: KeyRole, variable: string): `0x${string}` | undefined => {
    const file = keyFiles[role];
    if (file) return `0x${Buffer.from(keyFromFile(role, file, password)).toString('hex')}`;
    const value = env[variable];
    return value ? privateKey(value, variable) : undefined;
  };
  const relayer = signingKey('relayer', 'HASHLOCK_RELAYER_KEY');
  const solver = signingKey('solver', 'HASHLOCK_SOLVER_KEY');
  const feeSigner = signingKey('fee-signer', 'HASHLOCK_FEE_SIGNER_KEY');
  const secret = keyFiles.secret
    ? keyFromFile('secret', keyFiles.secret, password)
    : env.HASHLOCK_SECRET_KEY
      ? parseSecretKey(env.HASHLOCK_SECRET_KEY)
      : undefined;
  return {
    keys: { ...(relayer ? { relayer } : {}), ...(solver ? { solver } : {}), ...(feeSigner ? { feeSigner } : {}), ...(secret ? { secret } : {}) },
    keySources,
    keyFiles,
  };
}

/**
 * The key of `role` from its key file, decrypted with `password`; a ConfigError naming the config
 * field when the file holds another role's key, is damaged, or the password is wrong. A keystore another
 * program wrote (no role in it) serves any role but the secret box's.
 */
export function keyFromFile(role: KeyRole, file: string, password: string, where?: string): Uint8Array {
  const field = where ?? `key_files.${KEY_SOURCES.find((s) => s.role === role)!.field}`;
  try {
    const held = readKeyFileInfo(file).role;
    if (held ? held !== role : role === 'secret') {
      throw new ConfigError(`${field}: ${file} holds ${held ? `the ${held} key` : 'a key of no hashlock role'}, not the ${role} key`);
    }
    return decryptKeyFile(file, password).key;
  } catch (err) {
    if (err instanceof KeyFileError) throw new ConfigError(`${field}: ${err.message}`);
    throw err;
  }
}

/** The environment variables whose plaintext keys `hashlock serve` uses (every role's but the deployer's). */
export function plaintextKeyVariables(config: ServiceConfig): string[] {
  return KEY_SOURCES.filter((s) => s.role !== 'deployer' && config.keySources[s.role] === 'env').map((s) => s.variable);
}

function privateKey(value: string, name: string): `0x${string}` {
  const hex = value.startsWith('0x') ? value.slice(2) : value;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(`${name}: must be a 32-byte private key in hex`);
  return `0x${hex.toLowerCase()}`;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new ConfigError(`PORT: ${value} is not a TCP port number`);
  return port;
}
