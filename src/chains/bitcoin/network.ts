import type { BTC_NETWORK } from '@scure/btc-signer/utils.js';

/**
 * Address and key encodings of the bitcoin-family networks a chain may name (registry `network`).
 * Litecoin uses its newer P2SH version bytes (M… on mainnet, Q… on testnet/regtest); the legacy
 * Bitcoin-style 3…/2… P2SH encodings Litecoin Core still parses are not accepted.
 */
const NETWORKS: Readonly<Record<string, BTC_NETWORK>> = Object.freeze({
  bitcoin: { bech32: 'bc', pubKeyHash: 0x00, scriptHash: 0x05, wif: 0x80 },
  bitcoin_testnet: { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
  bitcoin_regtest: { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
  litecoin: { bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 },
  litecoin_testnet: { bech32: 'tltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
  litecoin_regtest: { bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
});

export const BITCOIN_NETWORK_NAMES: readonly string[] = Object.keys(NETWORKS);

/** The btc-signer network parameters of a bitcoin-family network name; throws on an unknown name. */
export function bitcoinNetwork(name: string): BTC_NETWORK {
  const network = Object.hasOwn(NETWORKS, name) ? NETWORKS[name] : undefined;
  if (!network) throw new Error(`unknown bitcoin-family network ${JSON.stringify(name)}`);
  return { ...network };
}
