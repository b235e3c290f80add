import { Type, type Static } from '@sinclair/typebox';

/** Chain families: each has (or will have) one ChainAdapter under src/chains/<family>/. */
export const FAMILIES = ['evm', 'bitcoin', 'solana', 'starknet', 'tron', 'lightning', 'spark', 'hypercore'] as const;
export type Family = (typeof FAMILIES)[number];

/** The closed set of HTLC and token schema names; the prefix before `:` is the family. */
export const HTLC_SCHEMAS = [
  'evm:htlc_erc20',
  'evm:htlc',
  'bitcoin:htlc',
  'solana:htlc',
  'solana:htlc_spltoken',
  'starknet:htlc_erc20',
  'tron:htlc_trc20',
  'lightning:htlc',
  'spark:htlc',
  'hypercore:htlc',
] as const;

export const TOKEN_SCHEMAS = [
  'evm:erc20',
  'evm:native',
  'bitcoin:native',
  'solana:native',
  'solana:spltoken',
  'starknet:erc20',
  'tron:trc20',
  'lightning:native',
  'spark:native',
  'hypercore:spot',
] as const;

/** HTLC schemas whose HTLC is a deployed contract or program, so an active asset needs its address. */
export const CONTRACT_HTLC_SCHEMAS: ReadonlySet<string> = new Set([
  'evm:htlc_erc20',
  'evm:htlc',
  'solana:htlc',
  'solana:htlc_spltoken',
  'starknet:htlc_erc20',
  'tron:htlc_trc20',
]);

const Key = Type.String({ pattern: '^[a-z][a-z0-9_]*$', maxLength: 64 });
const BaseUnits = Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', description: 'integer in base units' });

export const RegistryAssetSchema = Type.Object(
  {
    symbol: Key,
    name: Type.String({ minLength: 1 }),
    icon: Type.String(),
    decimals: Type.Integer({ minimum: 0, maximum: 36 }),
    htlc: Type.Object(
      { address: Type.String(), schema: Type.Union(HTLC_SCHEMAS.map((s) => Type.Literal(s))) },
      { additionalProperties: false },
    ),
    token: Type.Object(
      { address: Type.String(), schema: Type.Union(TOKEN_SCHEMAS.map((s) => Type.Literal(s))) },
      { additionalProperties: false },
    ),
    min_amount: BaseUnits,
    max_amount: BaseUnits,
    price_id: Type.String({ minLength: 1, description: 'key of the asset in the price sources (a CoinGecko id)' }),
    is_active: Type.Boolean(),
    listed_in: Type.Array(Type.Union([Type.Literal('v2'), Type.Literal('v3')]), { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
);

export const RegistryChainSchema = Type.Object(
  {
    chain: Key,
    name: Type.String({ minLength: 1 }),
    id: Type.String({ pattern: `^(${FAMILIES.join('|')}):[0-9]+$` }),
    network: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'network of non-EVM chains: bitcoin family bitcoin|bitcoin_testnet|bitcoin_regtest|litecoin|litecoin_testnet|litecoin_regtest; starknet SN_MAIN|SN_SEPOLIA; solana mainnet|devnet|testnet|localnet; tron mainnet|nile|shasta|localnet',
      }),
    ),
    native_asset: Key,
    icon: Type.String(),
    explorer_url: Type.String(),
    block_time_ms: Type.Integer({ minimum: 1 }),
    confirmation_target: Type.Integer({ minimum: 0 }),
    source_timelock: Type.Integer({ minimum: 1 }),
    destination_timelock: Type.Integer({ minimum: 1 }),
    is_active: Type.Boolean(),
    fee_claim: Type.Optional(
      Type.String({ minLength: 1, description: "the FeeClaim contract that pays affiliate fees (the deployment file's when the registry names none)" }),
    ),
    assets: Type.Array(RegistryAssetSchema),
  },
  { additionalProperties: false },
);

export const RegistryFileSchema = Type.Object(
  {
    network: Type.Union([Type.Literal('mainnet'), Type.Literal('testnet'), Type.Literal('localnet')]),
    chains: Type.Array(RegistryChainSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export type RegistryFile = Static<typeof RegistryFileSchema>;
export type RegistryChain = Static<typeof RegistryChainSchema>;
export type RegistryAsset = Static<typeof RegistryAssetSchema>;
