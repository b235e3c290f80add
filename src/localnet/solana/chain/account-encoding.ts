import { getBase58Decoder, getBase64Decoder, type EncodedAccount } from '@solana/kit';
import { invalidParams } from './rpc-error.ts';

export type AccountEncoding = 'base58' | 'base64' | 'binary' | 'jsonParsed';

/**
 * Every account reports rentEpoch u64::MAX, as mainnet does for all rent-exempt accounts since
 * rent collection ended; LiteSVM's own value is not exposed by its account reader.
 */
const RENT_EXEMPT_RENT_EPOCH = 18446744073709551615n;
/** The real RPC refuses base58 for larger data (and suggests base64). */
const MAX_BASE58_BYTES = 128;

const base58 = getBase58Decoder();
const base64 = getBase64Decoder();

export interface DataSlice {
  offset: number;
  length: number;
}

/** Reads an account `encoding` option: base58 (legacy `binary` when absent), base64; jsonParsed falls back to base64 as the real RPC does for data it cannot parse. */
export function accountEncoding(value: unknown, fallback: AccountEncoding): AccountEncoding {
  if (value === undefined) return fallback;
  if (value === 'base58' || value === 'base64' || value === 'jsonParsed' || value === 'binary') return value;
  if (value === 'base64+zstd') throw invalidParams('Invalid params: base64+zstd encoding is not supported by this local chain; use base64');
  throw invalidParams(`Invalid params: unknown encoding ${JSON.stringify(value)}`);
}

export function dataSlice(value: unknown): DataSlice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && 'offset' in value && 'length' in value && Number.isSafeInteger(value.offset) && Number.isSafeInteger(value.length)) {
    return { offset: Number(value.offset), length: Number(value.length) };
  }
  throw invalidParams('Invalid params: dataSlice must be { offset, length }');
}

/** An account as the RPC's UiAccount: { data, executable, lamports, owner, rentEpoch, space }. */
export function encodeAccount(account: EncodedAccount, encoding: AccountEncoding, slice?: DataSlice): Record<string, unknown> {
  const data = slice ? account.data.subarray(slice.offset, slice.offset + slice.length) : account.data;
  let encoded: unknown;
  if (encoding === 'binary' || encoding === 'base58') {
    if (data.length > MAX_BASE58_BYTES) throw invalidParams('Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
    encoded = encoding === 'binary' ? base58.decode(data) : [base58.decode(data), 'base58'];
  } else {
    encoded = [base64.decode(data), 'base64'];
  }
  return {
    data: encoded,
    executable: account.executable,
    lamports: account.lamports,
    owner: account.programAddress,
    rentEpoch: RENT_EXEMPT_RENT_EPOCH,
    space: account.data.length,
  };
}
