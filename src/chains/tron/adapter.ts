import { erc20Abi } from 'viem';
import type { ChainAdapter } from '../adapter.ts';
import { abiFile } from '../solidity-htlc/abi-file.ts';
import { exactly, hexHashKey } from '../family.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import { normalizeTronAddress } from './address.ts';
import { tronHtlc } from './index.ts';

/** Tron: orders and their signing data; settlement is not built yet. */
export const tronAdapter: ChainAdapter = {
  htlc: tronHtlc,
  normalizeParty: (chain, value) => tronHtlc.normalizeAddress(chain, value),
  // base58check exactly (a case change breaks the checksum), or the same address as 41-prefixed hex.
  partyMatchKey: (_chain, value) => exactly(normalizeTronAddress(value)),
  txHashMatchKey: hexHashKey(/^[0-9a-fA-F]{64}$/),
  partyDescription: 'a valid tron address',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  quoteInitiate: (_chain, data) => ({ type: 'tron', approval_transaction: data.approval_transaction, initiate_transaction: data.initiate_transaction }),
  servicePays: () => true,
  contractSchemas: {
    'tron:htlc_trc20': abiFile(new URL('./abi/TronHTLC.json', import.meta.url)),
    'tron:trc20': erc20Abi,
  },
};
