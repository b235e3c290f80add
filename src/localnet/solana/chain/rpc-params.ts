import { getBase58Encoder, getBase64Encoder, isAddress } from '@solana/kit';
import { invalidParams, MIN_CONTEXT_SLOT_NOT_REACHED, RpcError } from './rpc-error.ts';
import type { Commitment } from './slot-clock.ts';

/** Reads the positional params of a request, answering -32602 (never throwing anything else) when one is wrong. */
export class Params {
  constructor(private readonly values: readonly unknown[]) {}

  static of(params: unknown): Params {
    if (params === undefined || params === null) return new Params([]);
    if (!Array.isArray(params)) throw invalidParams('Invalid params: params must be an array');
    return new Params(params);
  }

  private required(index: number, label: string): unknown {
    const value = this.values[index];
    if (value === undefined || value === null) throw invalidParams(`Invalid params: missing ${label}`);
    return value;
  }

  string(index: number, label: string): string {
    const value = this.required(index, label);
    if (typeof value !== 'string') throw invalidParams(`Invalid params: ${label} must be a string`);
    return value;
  }

  address(index: number, label = 'pubkey'): string {
    const value = this.string(index, label);
    if (!isAddress(value)) throw invalidParams(`Invalid param: Invalid ${label}`);
    return value;
  }

  signature(index: number): string {
    return signatureString(this.required(index, 'signature'), 'signature');
  }

  u64(index: number, label: string): bigint {
    return u64Value(this.required(index, label), label);
  }

  array(index: number, label: string): unknown[] {
    const value = this.required(index, label);
    if (!Array.isArray(value)) throw invalidParams(`Invalid params: ${label} must be an array`);
    return value;
  }

  /** The config object at `index`: {} when absent. */
  config(index: number): Config {
    const value = this.values[index];
    if (value === undefined || value === null) return new Config({});
    if (typeof value !== 'object' || Array.isArray(value)) throw invalidParams('Invalid params: the configuration must be an object');
    return new Config(value as Record<string, unknown>);
  }

  /** A raw value, for methods with a legacy positional form. */
  raw(index: number): unknown {
    return this.values[index];
  }
}

export class Config {
  constructor(private readonly values: Record<string, unknown>) {}

  get(name: string): unknown {
    return this.values[name];
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.values[name];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') throw invalidParams(`Invalid params: ${name} must be a boolean`);
    return value;
  }

  integer(name: string): number | undefined {
    const value = this.values[name];
    if (value === undefined || value === null) return undefined;
    const n = typeof value === 'bigint' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalidParams(`Invalid params: ${name} must be a non-negative integer`);
    return n;
  }

  string(name: string): string | undefined {
    const value = this.values[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw invalidParams(`Invalid params: ${name} must be a string`);
    return value;
  }

  /** `commitment` (or `preflightCommitment`), with the legacy names the real RPC still accepts. */
  commitment(fallback: Commitment = 'finalized', name = 'commitment'): Commitment {
    const value = this.values[name];
    if (value === undefined || value === null) return fallback;
    switch (value) {
      case 'processed':
      case 'recent':
        return 'processed';
      case 'confirmed':
      case 'single':
      case 'singleGossip':
        return 'confirmed';
      case 'finalized':
      case 'max':
      case 'root':
        return 'finalized';
      default:
        throw invalidParams(`Invalid params: unknown variant \`${JSON.stringify(value)}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\``);
    }
  }

  /** The methods that read confirmed blocks refuse `processed`, as the real RPC does. */
  confirmedCommitment(): Exclude<Commitment, 'processed'> {
    const commitment = this.commitment();
    if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
    return commitment;
  }

  /** Refuses a request whose minContextSlot is above `slot`. */
  checkMinContextSlot(slot: number): void {
    const min = this.integer('minContextSlot');
    if (min !== undefined && min > slot) throw new RpcError(MIN_CONTEXT_SLOT_NOT_REACHED, 'Minimum context slot has not been reached', { contextSlot: slot });
  }
}

const base58 = getBase58Encoder();
const base64 = getBase64Encoder();

export function signatureString(value: unknown, label: string): string {
  if (typeof value !== 'string') throw invalidParams(`Invalid params: ${label} must be a string`);
  if (decodeBase58(value)?.length !== 64) throw invalidParams(`Invalid param: Invalid ${label}`);
  return value;
}

export function u64Value(value: unknown, label: string): bigint {
  if (typeof value === 'bigint' && value >= 0n && value < 2n ** 64n) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw invalidParams(`Invalid params: ${label} must be a u64`);
}

export function decodeBase58(text: string): Uint8Array | undefined {
  if (!/^[1-9A-HJ-NP-Za-km-z]*$/.test(text)) return undefined;
  return new Uint8Array(base58.encode(text));
}

export function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return new Uint8Array(base64.encode(text));
}

/** Decodes an encoded transaction or message param (base58 by default, as the real RPC). */
export function encodedBytes(text: string, encoding: unknown, label: string): Uint8Array {
  const chosen = encoding ?? 'base58';
  if (chosen !== 'base58' && chosen !== 'base64') throw invalidParams(`Invalid params: unsupported encoding: ${JSON.stringify(chosen)}. Supported encodings: base58, base64`);
  const bytes = chosen === 'base58' ? decodeBase58(text) : decodeBase64(text);
  if (!bytes) throw invalidParams(`Invalid params: invalid ${chosen} encoding: ${label}`);
  return bytes;
}
