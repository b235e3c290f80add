import type { FailedTransactionMetadata, TransactionMetadata } from 'litesvm';
import { getBase58Decoder, getBase64Decoder } from '@solana/kit';
import { messageFee } from './fees.ts';
import type { InnerInstructionsJson, TransactionRecord } from './signature-index.ts';
import type { ParsedMessage } from './wire-transaction.ts';

/** What LiteSVM returns for a transaction it ran or refused. */
export type ExecutionResult = TransactionMetadata | FailedTransactionMetadata;

const base58 = getBase58Decoder();
const base64 = getBase64Decoder();

export function isFailure(result: object): result is FailedTransactionMetadata {
  return 'err' in result;
}

export function metaOf(result: ExecutionResult): TransactionMetadata {
  return isFailure(result) ? result.meta() : result;
}

export function innerInstructionsJson(meta: TransactionMetadata): InnerInstructionsJson[] {
  const out: InnerInstructionsJson[] = [];
  meta.innerInstructions().forEach((list, index) => {
    if (list.length === 0) return;
    out.push({
      index,
      instructions: list.map((inner) => {
        const ix = inner.instruction();
        return { programIdIndex: ix.programIdIndex(), accounts: [...ix.accounts()], data: base58.decode(ix.data()), stackHeight: inner.stackHeight() };
      }),
    });
  });
  return out;
}

export function returnDataJson(meta: TransactionMetadata): TransactionRecord['returnData'] {
  const returnData = meta.returnData();
  const data = returnData.data();
  return data.length === 0 ? null : { programId: base58.decode(returnData.programId()), data: [base64.decode(data), 'base64'] };
}

/** The fee LiteSVM charged, from its metadata's debug text (the binding has no accessor for it). */
export function chargedFee(result: ExecutionResult, message: ParsedMessage): bigint {
  const match = /fee: (\d+) \}\)*$/.exec(result.toString());
  return match ? BigInt(match[1]!) : messageFee(message);
}

