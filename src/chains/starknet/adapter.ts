import { shortString } from 'starknet';
import type { ChainAdapter } from '../adapter.ts';
import { anyCase, hexHashKey } from '../family.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import { normalizeStarknetAddress } from './felt.ts';
import { starknetHtlc } from './index.ts';

/** Starknet: orders and their signing data; settlement is not built yet. */
export const starknetAdapter: ChainAdapter = {
  htlc: starknetHtlc,
  normalizeParty: (chain, value) => starknetHtlc.normalizeAddress(chain, value),
  // A felt: hex in any case, with or without leading zeros.
  partyMatchKey: (_chain, value) => anyCase(normalizeStarknetAddress(value)),
  txHashMatchKey: hexHashKey(/^0x[0-9a-fA-F]{1,64}$/),
  partyDescription: 'a valid starknet address',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  // Garden's V3InitiateStarknet: chain_id is the network's chain id felt (SN_MAIN: 0x534e5f4d41494e).
  quoteInitiate: (chain, data) => ({
    type: 'starknet',
    chain_id: shortString.encodeShortString(chain.network),
    approval_transaction: data.approval_transaction,
    initiate_transaction: data.initiate_transaction,
  }),
  servicePays: () => true,
};
