/**
 * The programs' events, read from transaction logs. Anchor's `emit!` logs
 * "Program data: <base64 of sha256("event:<Name>")[0..8] ‖ Borsh fields>"; the runtime's
 * "Program <id> invoke [n]" / "Program <id> success|failed" lines say which program logged it, so a
 * program that the HTLC program calls (or that calls it) cannot pass its data off as an HTLC event.
 */
import {
  addDecoderSizePrefix,
  fixDecoderSize,
  getAddressDecoder,
  getBytesDecoder,
  getOptionDecoder,
  getStructDecoder,
  getU32Decoder,
  getU64Decoder,
  isSome,
  type Address,
} from '@solana/kit';
import { anchorEventDiscriminator, type HtlcProgramKind } from './program.ts';

export interface InitiatedEvent {
  name: 'Initiated';
  amount: bigint;
  expiresInSlots: bigint;
  initiator: Address;
  redeemer: Address;
  secretHash: Uint8Array;
  /** SPL only. */
  mint?: Address;
  /** SPL only: `destination_data`, null when None. */
  destinationData?: Uint8Array | null;
}

export interface RedeemedEvent {
  name: 'Redeemed';
  initiator: Address;
  secret: Uint8Array;
}

export interface RefundedEvent {
  name: 'Refunded' | 'InstantRefunded';
  initiator: Address;
  secretHash: Uint8Array;
}

export type SwapEvent = InitiatedEvent | RedeemedEvent | RefundedEvent;

const bytes32 = fixDecoderSize(getBytesDecoder(), 32);
const nativeInitiated = getStructDecoder([
  ['amount', getU64Decoder()],
  ['expiresInSlots', getU64Decoder()],
  ['initiator', getAddressDecoder()],
  ['redeemer', getAddressDecoder()],
  ['secretHash', bytes32],
]);
const splInitiated = getStructDecoder([
  ['amount', getU64Decoder()],
  ['expiresInSlots', getU64Decoder()],
  ['initiator', getAddressDecoder()],
  ['mint', getAddressDecoder()],
  ['redeemer', getAddressDecoder()],
  ['secretHash', bytes32],
  ['destinationData', getOptionDecoder(addDecoderSizePrefix(getBytesDecoder(), getU32Decoder()))],
]);
const initiatorAndBytes = getStructDecoder([
  ['initiator', getAddressDecoder()],
  ['bytes', bytes32],
]);

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const DISCRIMINATORS = new Map(
  (['Initiated', 'Redeemed', 'Refunded', 'InstantRefunded'] as const).map((name) => [hex(anchorEventDiscriminator(name)), name]),
);

/** One event's bytes (discriminator and fields), or undefined when they are not one of the programs' events. */
export function decodeSwapEvent(kind: HtlcProgramKind, data: Uint8Array): SwapEvent | undefined {
  const name = DISCRIMINATORS.get(hex(data.subarray(0, 8)));
  if (name === undefined) return undefined;
  const body = data.subarray(8);
  if (name === 'Initiated') {
    if (kind === 'native') {
      const e = nativeInitiated.decode(body);
      return { name, ...e, secretHash: Uint8Array.from(e.secretHash) };
    }
    const e = splInitiated.decode(body);
    return {
      name,
      ...e,
      secretHash: Uint8Array.from(e.secretHash),
      destinationData: isSome(e.destinationData) ? Uint8Array.from(e.destinationData.value) : null,
    };
  }
  const { initiator, bytes } = initiatorAndBytes.decode(body);
  if (name === 'Redeemed') return { name, initiator, secret: Uint8Array.from(bytes) };
  return { name, initiator, secretHash: Uint8Array.from(bytes) };
}

const INVOKE = /^Program (\w+) invoke \[\d+\]$/;
const EXIT = /^Program (\w+) (success|failed)/;
const DATA = 'Program data: ';

/** The events that `program` emitted, in order, from a transaction's log lines. */
export function decodeSwapEvents(kind: HtlcProgramKind, program: Address, logs: readonly string[]): SwapEvent[] {
  const stack: string[] = [];
  const events: SwapEvent[] = [];
  for (const line of logs) {
    const invoke = INVOKE.exec(line);
    if (invoke) {
      stack.push(invoke[1] ?? '');
      continue;
    }
    if (EXIT.test(line)) {
      stack.pop();
      continue;
    }
    if (line.startsWith(DATA) && stack[stack.length - 1] === program) {
      // Anchor logs one field per emit!; more fields would be another program's format.
      const fields = line.slice(DATA.length).split(' ');
      if (fields.length !== 1) continue;
      const event = decodeSwapEvent(kind, new Uint8Array(Buffer.from(fields[0] ?? '', 'base64')));
      if (event) events.push(event);
    }
  }
  return events;
}
