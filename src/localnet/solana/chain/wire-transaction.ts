import { getBase58Decoder } from '@solana/kit';

/** Solana's limit on a serialized transaction (the packet data size). */
export const MAX_TRANSACTION_BYTES = 1232;

export interface CompiledInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

export interface AddressTableLookup {
  accountKey: string;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

export interface ParsedMessage {
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  staticAccountKeys: string[];
  recentBlockhash: string;
  instructions: CompiledInstruction[];
  addressTableLookups: AddressTableLookup[];
  /** The serialized message: what the signatures sign. */
  bytes: Uint8Array;
  /** Where the recent blockhash sits in `bytes`, for replaceRecentBlockhash. */
  blockhashOffset: number;
}

export interface ParsedTransaction {
  signatures: Uint8Array[];
  message: ParsedMessage;
  wire: Uint8Array;
}

export class WireFormatError extends Error {}

class Reader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}
  byte(): number {
    const b = this.bytes[this.offset];
    if (b === undefined) throw new WireFormatError('io error: failed to fill whole buffer');
    this.offset++;
    return b;
  }
  take(n: number): Uint8Array {
    if (this.offset + n > this.bytes.length) throw new WireFormatError('io error: failed to fill whole buffer');
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
  /** Solana's compact-u16 (shortvec) length. */
  shortVec(): number {
    let value = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      const b = this.byte();
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        if (value > 0xffff) throw new WireFormatError('compact-u16 overflow');
        return value;
      }
    }
    throw new WireFormatError('compact-u16 overflow');
  }
  get done(): boolean {
    return this.offset === this.bytes.length;
  }
}

const base58 = getBase58Decoder();

function readMessage(reader: Reader, bytes: Uint8Array): ParsedMessage {
  const start = reader.offset;
  const first = reader.byte();
  let version: 'legacy' | 0 = 'legacy';
  let numRequiredSignatures = first;
  if (first & 0x80) {
    if ((first & 0x7f) !== 0) throw new WireFormatError(`unsupported transaction version ${first & 0x7f}`);
    version = 0;
    numRequiredSignatures = reader.byte();
  }
  const header = { numRequiredSignatures, numReadonlySignedAccounts: reader.byte(), numReadonlyUnsignedAccounts: reader.byte() };
  const keyCount = reader.shortVec();
  const staticAccountKeys: string[] = [];
  for (let i = 0; i < keyCount; i++) staticAccountKeys.push(base58.decode(reader.take(32)));
  const blockhashOffset = reader.offset - start;
  const recentBlockhash = base58.decode(reader.take(32));
  const instructions: CompiledInstruction[] = [];
  const instructionCount = reader.shortVec();
  for (let i = 0; i < instructionCount; i++) {
    const programIdIndex = reader.byte();
    const accounts = [...reader.take(reader.shortVec())];
    const data = reader.take(reader.shortVec()).slice();
    instructions.push({ programIdIndex, accounts, data });
  }
  const addressTableLookups: AddressTableLookup[] = [];
  if (version === 0) {
    const lookupCount = reader.shortVec();
    for (let i = 0; i < lookupCount; i++) {
      const accountKey = base58.decode(reader.take(32));
      const writableIndexes = [...reader.take(reader.shortVec())];
      const readonlyIndexes = [...reader.take(reader.shortVec())];
      addressTableLookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  }
  return { version, header, staticAccountKeys, recentBlockhash, instructions, addressTableLookups, bytes: bytes.subarray(start, reader.offset), blockhashOffset };
}

/** Decodes a legacy or v0 transaction in wire format; throws WireFormatError on malformed bytes. */
export function parseWireTransaction(wire: Uint8Array): ParsedTransaction {
  const reader = new Reader(wire);
  const signatureCount = reader.shortVec();
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < signatureCount; i++) signatures.push(reader.take(64));
  const message = readMessage(reader, wire);
  if (!reader.done) throw new WireFormatError('trailing bytes after the transaction');
  return { signatures, message, wire };
}

/** Decodes a serialized message alone (getFeeForMessage). */
export function parseWireMessage(bytes: Uint8Array): ParsedMessage {
  const reader = new Reader(bytes);
  const message = readMessage(reader, bytes);
  if (!reader.done) throw new WireFormatError('trailing bytes after the message');
  return message;
}

/**
 * The structural checks the runtime's sanitize applies before anything else, with its message
 * ("Transaction failed to sanitize accounts offsets correctly") when they fail.
 */
export function isSanitary(tx: ParsedTransaction): boolean {
  const { header, staticAccountKeys, instructions, addressTableLookups } = tx.message;
  if (tx.signatures.length !== header.numRequiredSignatures) return false;
  if (header.numRequiredSignatures === 0) return false;
  if (header.numReadonlySignedAccounts >= header.numRequiredSignatures) return false;
  if (staticAccountKeys.length < header.numRequiredSignatures + header.numReadonlyUnsignedAccounts) return false;
  const loaded = addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  const total = staticAccountKeys.length + loaded;
  if (total > 256) return false;
  return instructions.every((ix) => ix.programIdIndex > 0 && ix.programIdIndex < staticAccountKeys.length && ix.accounts.every((a) => a < total));
}
