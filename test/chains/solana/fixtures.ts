import { base58 } from '@scure/base';
import {
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from '@solana/kit';
import { loadRegistry } from '../../../src/chains/registry.ts';
import type { Asset } from '../../../src/chains/registry.ts';
import type { HtlcTerms } from '../../../src/chains/family.ts';
import { MAINNET_REGISTRY_PATH } from '../../helpers/fixtures.ts';

const registry = loadRegistry(MAINNET_REGISTRY_PATH);

export function mainnetAsset(id: string): Asset {
  const asset = registry.asset(id);
  if (!asset) throw new Error(`no asset ${id} in the mainnet registry`);
  return asset;
}

export const SOL = mainnetAsset('solana:sol');
export const USDC = mainnetAsset('solana:usdc');
export const SOLANA = SOL.chain;

/** A 32-byte address filled with one byte value. */
export const filledAddress = (byte: number): string => base58.encode(new Uint8Array(32).fill(byte));

export const INITIATOR = filledAddress(1);
export const REDEEMER = filledAddress(2);
/** Garden's mainnet relayer (fee payer and sponsor of gasless transactions). */
export const RELAYER = '9cBuPNiHXiMNg3Fin8xLCGJQBTXjYQTFtyaFQv2uiM1H';
export const BLOCKHASH = filledAddress(7);
export const SECRET_HASH = '61d2b5a1b0d7c0e8f6a4c3b2a19080706050403020100f0e0d0c0b0a09080706';

export function terms(asset: Asset, overrides: Partial<HtlcTerms> = {}): HtlcTerms {
  return {
    asset,
    initiator: INITIATOR,
    redeemer: REDEEMER,
    timelock: 216_000n,
    amount: 354_608_265n,
    secretHash: SECRET_HASH,
    ...overrides,
  };
}

/** A base64 wire transaction taken apart: signature slots in order, compiled and decompiled message. */
export function decodeTransaction(base64: string) {
  const transaction = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
  const compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  const message = decompileTransactionMessage(compiled);
  return { transaction, compiled, message, signers: Object.keys(transaction.signatures) };
}
