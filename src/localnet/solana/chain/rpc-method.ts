import type { LiteSVM } from 'litesvm';
import type { Ledger } from './ledger.ts';
import type { Params } from './rpc-params.ts';
import type { SignatureIndex } from './signature-index.ts';
import type { SlotClock } from './slot-clock.ts';

/** The Agave crates LiteSVM 1.5.0 is built from: the runtime that answers here. */
export const RUNTIME_VERSION = '4.3.0';

export type RpcMethod = (params: Params) => unknown;

export interface RpcMethodContext {
  svm: LiteSVM;
  ledger: Ledger;
  clock: SlotClock;
  index: SignatureIndex;
  genesisHash: string;
}

/** The { context: { apiVersion, slot }, value } wrapper of the methods that have one. */
export function withContext(value: unknown, slot: number): { context: { apiVersion: string; slot: number }; value: unknown } {
  return { context: { apiVersion: RUNTIME_VERSION, slot }, value };
}
