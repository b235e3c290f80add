// Tron's checks on a broadcast transaction, each answering with the code a java-tron node answers.
import { utils } from 'tronweb';
import { recoverAddress } from 'viem';
import { refBlockHashOf, refBlockNumber } from './blocks.ts';

/** A signed transaction as `wallet/broadcasttransaction` takes it. */
export interface TronTransaction {
  txID: string;
  raw_data: { contract: Array<{ type: string; parameter: { value: Record<string, unknown>; type_url: string }; Permission_id?: number }>; ref_block_bytes: string; ref_block_hash: string; expiration: number; timestamp?: number; fee_limit?: number; data?: string };
  raw_data_hex: string;
  signature?: string[];
  visible?: boolean;
}

/** Tron's broadcast result codes that the local chain answers. */
export type RefusalCode = 'SIGERROR' | 'CONTRACT_VALIDATE_ERROR' | 'DUP_TRANSACTION_ERROR' | 'TAPOS_ERROR' | 'TRANSACTION_EXPIRATION_ERROR' | 'OTHER_ERROR';

export class TransactionRefused extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** java-tron refuses an expiration more than a day past the head block. */
export const MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/** The one contract a TriggerSmartContract transaction carries, decoded from the signed bytes. */
export interface TriggerCall {
  owner: string;
  contract: string;
  data: string;
  callValue: bigint;
  feeLimit: bigint;
  expiration: number;
  refBlockBytes: string;
  refBlockHash: string;
}

const HEX = /^[0-9a-fA-F]*$/;

/**
 * The transaction's bytes and id agree with its JSON: the JSON encodes to `raw_data_hex` and `txID`
 * is sha256 of those bytes. Answers the call the bytes hold.
 */
export function checkHash(tx: unknown): { tx: TronTransaction; call: TriggerCall } {
  const t = tx as Partial<TronTransaction> | null;
  if (typeof t !== 'object' || t === null || typeof t.txID !== 'string' || typeof t.raw_data !== 'object' || typeof t.raw_data_hex !== 'string' || !HEX.test(t.raw_data_hex)) {
    throw new TransactionRefused('OTHER_ERROR', 'the transaction needs txID, raw_data and raw_data_hex');
  }
  const contract = t.raw_data.contract?.[0];
  if (t.raw_data.contract?.length !== 1 || contract?.type !== 'TriggerSmartContract') {
    throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', 'the local Tron chain runs TriggerSmartContract transactions only, one contract each');
  }
  let rawDataHex: string;
  let txID: string;
  try {
    const pb: unknown = utils.transaction.txJsonToPb(t);
    rawDataHex = utils.transaction.txPbToRawDataHex(pb);
    txID = utils.transaction.txPbToTxID(pb).replace(/^0x/, '');
  } catch (err) {
    throw new TransactionRefused('OTHER_ERROR', `raw_data does not encode: ${(err as Error).message}`);
  }
  if (rawDataHex.toLowerCase() !== t.raw_data_hex.toLowerCase()) throw new TransactionRefused('OTHER_ERROR', 'raw_data does not match raw_data_hex');
  if (txID.toLowerCase() !== t.txID.toLowerCase()) throw new TransactionRefused('OTHER_ERROR', 'txID is not sha256 of raw_data');
  const raw = utils.deserializeTx.deserializeTransaction('TriggerSmartContract', rawDataHex) as {
    contract: [{ parameter: { value: { owner_address: string; contract_address: string; data: string; call_value: number } } }];
    fee_limit: number;
    expiration: number;
    ref_block_bytes: string;
    ref_block_hash: string;
  };
  const value = raw.contract[0].parameter.value;
  return {
    tx: t as TronTransaction,
    call: {
      owner: value.owner_address.toLowerCase(),
      contract: value.contract_address.toLowerCase(),
      data: value.data.toLowerCase(),
      callValue: BigInt(value.call_value),
      feeLimit: BigInt(raw.fee_limit),
      expiration: raw.expiration,
      refBlockBytes: raw.ref_block_bytes.toLowerCase(),
      refBlockHash: raw.ref_block_hash.toLowerCase(),
    },
  };
}

/** Exactly one signature, the owner's: secp256k1 over the txID bytes, 65 bytes r|s|v. */
export async function checkSignature(tx: TronTransaction, owner: string): Promise<void> {
  const signatures = tx.signature ?? [];
  if (signatures.length !== 1) throw new TransactionRefused('SIGERROR', `the owner's permission takes 1 signature, the transaction has ${signatures.length}`);
  const signature = (signatures[0] ?? '').replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{130}$/.test(signature)) throw new TransactionRefused('SIGERROR', 'a signature is 65 bytes r|s|v');
  let signer: string;
  try {
    signer = await recoverAddress({ hash: `0x${tx.txID}`, signature: `0x${signature}` });
  } catch {
    throw new TransactionRefused('SIGERROR', 'the signature does not recover a key');
  }
  if (`41${signer.slice(2).toLowerCase()}` !== owner) throw new TransactionRefused('SIGERROR', `the signature is not the owner's (${owner})`);
}

/** Not expired at the head block, and not more than a day past it. */
export function checkExpiration(expiration: number, headTimestampMs: number): void {
  if (expiration <= headTimestampMs) throw new TransactionRefused('TRANSACTION_EXPIRATION_ERROR', `expired at ${expiration}, the head block is at ${headTimestampMs}`);
  if (expiration > headTimestampMs + MAX_EXPIRATION_MS) throw new TransactionRefused('TRANSACTION_EXPIRATION_ERROR', `expiration ${expiration} is more than a day past the head block (${headTimestampMs})`);
}

/** The reference block (TAPOS) is on this chain: the newest block with those low 2 bytes has that hash. */
export async function checkTapos(call: TriggerCall, head: number, blockIdAt: (number: number) => Promise<string | undefined>): Promise<void> {
  const number = refBlockNumber(call.refBlockBytes, head);
  const blockId = number === undefined ? undefined : await blockIdAt(number);
  if (blockId === undefined || refBlockHashOf(blockId) !== call.refBlockHash) {
    throw new TransactionRefused('TAPOS_ERROR', `reference block ${call.refBlockBytes}/${call.refBlockHash} is not on this chain`);
  }
}
