import type { ChainAdapter } from '../adapter.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import { starknetHtlc } from './index.ts';

/** Starknet: orders and their signing data; settlement is not built yet. */
export const starknetAdapter: ChainAdapter = {
  htlc: starknetHtlc,
  partiesAreKeys: false,
  normalizeParty: (chain, value) => starknetHtlc.normalizeAddress(chain, value),
  partyDescription: 'a valid starknet address',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  quoteInitiate: (_chain, data) => ({ type: 'starknet', approval_transaction: data.approval_transaction, initiate_transaction: data.initiate_transaction }),
  servicePays: () => true,
};
