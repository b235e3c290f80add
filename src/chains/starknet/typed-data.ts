import { shortString, type TypedData } from 'starknet';
import { checkU128, feltHex, secretHashWords, splitU256, starknetAddress } from './felt.ts';

/**
 * The domain version as the contract hashes it: Cairo's `VERSION = '1'` is the shortstring 0x31.
 * Written "1", starknet.js and wallets would read it as the number 1 (a decimal string parses as a
 * number before a shortstring), giving a different domain hash and a signature the HTLC rejects.
 */
export const DOMAIN_VERSION = shortString.encodeShortString('1');

/** The SNIP-12 types of the HTLC's gasless initiate (revision 1; `u256` is a preset type). */
export const INITIATE_TYPES = {
  StarknetDomain: [
    { name: 'name', type: 'shortstring' },
    { name: 'version', type: 'shortstring' },
    { name: 'chainId', type: 'shortstring' },
    { name: 'revision', type: 'shortstring' },
  ],
  Initiate: [
    { name: 'redeemer', type: 'ContractAddress' },
    { name: 'amount', type: 'u256' },
    { name: 'timelock', type: 'u128' },
    { name: 'secretHash', type: 'u128*' },
  ],
};

export interface InitiateMessage {
  /** The redeemer address as a decimal felt. */
  redeemer: string;
  /** u256 halves as 0x hex. */
  amount: { low: string; high: string };
  /** Decimal, in blocks. */
  timelock: string;
  /** The secret hash as eight big-endian u32 words. */
  secretHash: number[];
}

export interface InitiateTypedData extends TypedData {
  message: InitiateMessage;
}

/**
 * The SNIP-12 (revision 1) typed data the initiator signs for `initiate_with_signature`, in the
 * shape Garden's API serves: domain {name "HTLC", version '1', chainId = the network shortstring,
 * revision "1"}, primary type Initiate. The signer is the initiator (the account address enters the
 * message hash, so the same data signed by another account authorises nothing).
 */
export function initiateTypedData(input: {
  network: string;
  redeemer: string;
  amount: bigint;
  timelock: bigint;
  secretHash: string;
}): InitiateTypedData {
  const { low, high } = splitU256(input.amount);
  return {
    types: INITIATE_TYPES,
    primaryType: 'Initiate',
    domain: { name: 'HTLC', version: DOMAIN_VERSION, chainId: input.network, revision: '1' },
    message: {
      redeemer: BigInt(starknetAddress(input.redeemer, 'redeemer')).toString(10),
      amount: { low: feltHex(low), high: feltHex(high) },
      timelock: checkU128(input.timelock, 'timelock').toString(10),
      secretHash: secretHashWords(input.secretHash),
    },
  };
}
