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

/** What every transaction the local chain runs carries, decoded from the signed bytes. Addresses are 41-prefixed hex. */
interface TransactionCommon {
  owner: string;
  callValue: bigint;
  feeLimit: bigint;
  expiration: number;
  refBlockBytes: string;
  refBlockHash: string;
}

/** A TriggerSmartContract transaction: a call of `contract`. */
export interface TriggerCall extends TransactionCommon {
  type: 'TriggerSmartContract';
  contract: string;
  data: string;
}

/** A CreateSmartContract transaction: `bytecode` (creation code and constructor arguments) run to create a contract. */
export interface CreateCall extends TransactionCommon {
  type: 'CreateSmartContract';
  origin: string;
  bytecode: string;
  name: string;
  consumeUserResourcePercent: number;
  originEnergyLimit: number;
}

export type TransactionCall = TriggerCall | CreateCall;

const HEX = /^[0-9a-fA-F]*$/;
const RUNS = ['TriggerSmartContract', 'CreateSmartContract'];

/** The fields of raw_data that TronWeb's deserializer answers beside the contract. */
interface RawCommon {
  fee_limit: number;
  expiration: number;
  ref_block_bytes: string;
  ref_block_hash: string;
}
type Decoded<V> = RawCommon & { contract: [{ parameter: { value: V } }] };

/** The contract of the signed bytes, as TronWeb's deserializer reads them. */
function decodeCall(type: string, rawDataHex: string): TransactionCall {
  if (type === 'CreateSmartContract') {
    type Create = { owner_address: string; new_contract: { origin_address: string; bytecode: string; call_value: number; name: string; consume_user_resource_percent: number; origin_energy_limit: number } | null };
    const raw = utils.deserializeTx.deserializeTransaction('CreateSmartContract', rawDataHex) as Decoded<Create>;
    const value = raw.contract[0].parameter.value;
    if (!value.new_contract) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', 'the CreateSmartContract has no new_contract');
    const created = value.new_contract;
    return {
      type: 'CreateSmartContract',
      owner: value.owner_address.toLowerCase(),
      origin: created.origin_address.toLowerCase(),
      bytecode: created.bytecode.toLowerCase(),
      name: created.name,
      consumeUserResourcePercent: created.consume_user_resource_percent,
      originEnergyLimit: created.origin_energy_limit,
      callValue: BigInt(created.call_value),
      ...common(raw),
    };
  }
  type Trigger = { owner_address: string; contract_address: string; data: string; call_value: number };
  const raw = utils.deserializeTx.deserializeTransaction('TriggerSmartContract', rawDataHex) as Decoded<Trigger>;
  const value = raw.contract[0].parameter.value;
  return {
    type: 'TriggerSmartContract',
    owner: value.owner_address.toLowerCase(),
    contract: value.contract_address.toLowerCase(),
    data: value.data.toLowerCase(),
    callValue: BigInt(value.call_value),
    ...common(raw),
  };
}

const common = (raw: RawCommon) => ({
  feeLimit: BigInt(raw.fee_limit),
  expiration: raw.expiration,
  refBlockBytes: raw.ref_block_bytes.toLowerCase(),
  refBlockHash: raw.ref_block_hash.toLowerCase(),
});

/**
 * The transaction's bytes and id agree with its JSON: the JSON encodes to `raw_data_hex` and `txID`
 * is sha256 of those bytes. Answers the call the bytes hold.
 */
export function checkHash(tx: unknown): { tx: TronTransaction; call: TransactionCall } {
  const t = tx as Partial<TronTransaction> | null;
  if (typeof t !== 'object' || t === null || typeof t.txID !== 'string' || typeof t.raw_data !== 'object' || typeof t.raw_data_hex !== 'string' || !HEX.test(t.raw_data_hex)) {
    throw new TransactionRefused('OTHER_ERROR', 'the transaction needs txID, raw_data and raw_data_hex');
  }
  const contract = t.raw_data.contract?.[0];
  if (t.raw_data.contract?.length !== 1 || !RUNS.includes(contract?.type ?? '')) {
    throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', `the local Tron chain runs ${RUNS.join(' and ')} transactions only, one contract each`);
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
  return { tx: t as TronTransaction, call: decodeCall(contract!.type, rawDataHex) };
}

/**
 * java-tron's checks of a creation before it runs (its VMActuator's): the owner is the contract's origin,
 * a name of at most 32 bytes, a consume_user_resource_percent from 0 to 100, an origin_energy_limit above 0.
 */
export function checkCreate(call: CreateCall): void {
  const refuse = (message: string): never => {
    throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', message);
  };
  if (call.owner !== call.origin) refuse('OwnerAddress is not equals OriginAddress');
  if (Buffer.byteLength(call.name) > 32) refuse("contractName's length cannot be greater than 32");
  if (call.consumeUserResourcePercent < 0 || call.consumeUserResourcePercent > 100) refuse('percent must be >= 0 and <= 100');
  if (call.originEnergyLimit <= 0) refuse('The originEnergyLimit must be > 0');
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
export async function checkTapos(call: Pick<TransactionCall, 'refBlockBytes' | 'refBlockHash'>, head: number, blockIdAt: (number: number) => Promise<string | undefined>): Promise<void> {
  const number = refBlockNumber(call.refBlockBytes, head);
  const blockId = number === undefined ? undefined : await blockIdAt(number);
  if (blockId === undefined || refBlockHashOf(blockId) !== call.refBlockHash) {
    throw new TransactionRefused('TAPOS_ERROR', `reference block ${call.refBlockBytes}/${call.refBlockHash} is not on this chain`);
  }
}
