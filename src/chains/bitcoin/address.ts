import { schnorr } from '@noble/curves/secp256k1.js';
import { Address } from '@scure/btc-signer';
import type { PartyMatchKey } from '../adapter.ts';
import { bitcoinNetwork } from './network.ts';

const ACCEPTED_TYPES: ReadonlySet<string> = new Set(['pkh', 'sh', 'wpkh', 'wsh', 'tr']);

/**
 * The canonical form of a P2PKH, P2SH, P2WPKH, P2WSH or P2TR address of `network` (bech32
 * lowercased, base58 unchanged), or undefined when it is not one. Other witness programs
 * (future versions, P2A) are refused. Throws only for an unknown network name.
 */
export function normalizeBitcoinAddress(network: string, address: string): string | undefined {
  return decodeAddress(network, address)?.address;
}

/** How the order list finds an address: bech32 (segwit) in any case, base58 (P2PKH, P2SH) exactly. */
export function bitcoinAddressMatchKey(network: string, address: string): PartyMatchKey | undefined {
  const decoded = decodeAddress(network, address);
  return decoded && { key: decoded.address, exact: BASE58_TYPES.has(decoded.type) };
}

const BASE58_TYPES: ReadonlySet<string> = new Set(['pkh', 'sh']);

function decodeAddress(network: string, address: string): { address: string; type: string } | undefined {
  const coder = Address(bitcoinNetwork(network));
  try {
    const decoded = coder.decode(address);
    if (!ACCEPTED_TYPES.has(decoded.type)) return undefined;
    return { address: coder.encode(decoded), type: decoded.type };
  } catch {
    return undefined;
  }
}

const X_ONLY_HEX = /^[0-9a-fA-F]{64}$/;

/** The BIP-340 x-only public key (64 lowercase hex digits) of a 32-byte private key. */
export function xOnlyPublicKeyOf(privateKey: Uint8Array): string {
  return Buffer.from(schnorr.getPublicKey(privateKey)).toString('hex');
}

/** Whether `hex` is a BIP-340 x-only public key: 64 hex digits that are the x of a curve point. */
export function isXOnlyPublicKey(hex: string): boolean {
  if (typeof hex !== 'string' || !X_ONLY_HEX.test(hex)) return false;
  try {
    schnorr.utils.lift_x(BigInt(`0x${hex}`));
    return true;
  } catch {
    return false;
  }
}
