import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import type { utils as TronUtils } from 'tronweb';
import type { TronBlockHeader } from './api.ts';
import { tronToEvmHex } from './address.ts';
import type { TronCall } from './jobs.ts';

/** A signed TriggerSmartContract transaction in Tron's JSON, as `wallet/broadcasttransaction` takes it. */
export interface SignedTronTransaction {
  visible: false;
  txID: string;
  raw_data: {
    contract: Array<{ parameter: { value: Record<string, unknown>; type_url: string }; type: 'TriggerSmartContract' }>;
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    fee_limit: number;
    timestamp: number;
  };
  raw_data_hex: string;
  signature: string[];
}

/**
 * TronWeb's protobuf encoder, loaded by the first Tron transaction signed: TronWeb brings ethers,
 * axios and protobuf, about 50 MB resident that a service without a Tron chain need not hold.
 */
let tronEncoder: Promise<typeof TronUtils.transaction> | undefined;
const encoder = () => (tronEncoder ??= import('tronweb').then((tronweb) => tronweb.utils.transaction));

/** 41-prefixed hex of a base58 address, as the API takes addresses with `visible: false`. */
export const hex41 = (address: string): string => `41${tronToEvmHex(address).slice(2).toLowerCase()}`;

/** The fields of a transaction's raw_data besides its contract: TAPOS reference, expiration, fee limit, timestamp. */
export function transactionHeader(input: { reference: TronBlockHeader; expiration: number; feeLimitSun: bigint; now?: number }) {
  return {
    ref_block_bytes: (input.reference.number & 0xffffn).toString(16).padStart(4, '0'),
    ref_block_hash: input.reference.blockId.slice(16, 32),
    expiration: input.expiration,
    fee_limit: Number(input.feeLimitSun),
    timestamp: input.now ?? Date.now(),
  };
}

/**
 * Builds and signs a contract call offline, as java-tron would build it: TAPOS from `reference`
 * (`ref_block_bytes` = the low 2 bytes of its number, `ref_block_hash` = bytes 8 to 16 of its
 * blockID), valid until `expiration` (ms). The protobuf bytes come from TronWeb's own encoder (the one
 * the nodes' answers are checked with); `txID = sha256(raw_data)`, and the owner's signature is
 * secp256k1 over the txID, 65 bytes r|s|v.
 */
export async function signTronCall(input: {
  call: TronCall;
  owner: string;
  privateKey: Hex;
  reference: TronBlockHeader;
  expiration: number;
  feeLimitSun: bigint;
  now?: number;
}): Promise<SignedTronTransaction> {
  const raw_data: SignedTronTransaction['raw_data'] = {
    contract: [
      {
        parameter: {
          value: { data: input.call.data.slice(2).toLowerCase(), owner_address: hex41(input.owner), contract_address: hex41(input.call.contract) },
          type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
        },
        type: 'TriggerSmartContract',
      },
    ],
    ...transactionHeader(input),
  };
  const transaction = await encoder();
  const pb: unknown = transaction.txJsonToPb({ raw_data, visible: false });
  const rawDataHex = String(transaction.txPbToRawDataHex(pb)).toLowerCase();
  const txID = bytesToHex(sha256(hexToBytes(`0x${rawDataHex}`))).slice(2);
  const signature = await sign({ hash: `0x${txID}`, privateKey: input.privateKey, to: 'hex' });
  return { visible: false, txID, raw_data, raw_data_hex: rawDataHex, signature: [signature.slice(2)] };
}

/** The expiration (ms) of a stored signed transaction. */
export const expirationOf = (raw: string): number => (JSON.parse(raw) as SignedTronTransaction).raw_data.expiration;
