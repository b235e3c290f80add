import type { ChainAdapter } from '../adapter.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import { tronHtlc } from './index.ts';

/** Tron: orders and their signing data; settlement is not built yet. */
export const tronAdapter: ChainAdapter = {
  htlc: tronHtlc,
  partiesAreKeys: false,
  normalizeParty: (chain, value) => tronHtlc.normalizeAddress(chain, value),
  partyDescription: 'a valid tron address',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  quoteInitiate: (_chain, data) => ({ type: 'tron', approval_transaction: data.approval_transaction, initiate_transaction: data.initiate_transaction }),
  servicePays: () => true,
};
