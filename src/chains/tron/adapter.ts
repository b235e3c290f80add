import { encodeFunctionData, erc20Abi } from 'viem';
import { htlcFundingSteps, htlcRefundStep } from '../aggregator-steps.ts';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';
import { APPROVE_FEE_LIMIT } from './calls.ts';
import { tronChainId } from './order-id.ts';
import type { ChainAdapter } from '../adapter.ts';
import { loadArtifact } from '../solidity-htlc/artifacts.ts';
import { anyCase, exactly, hexHashKey } from '../family.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import { normalizeTronAddress } from './address.ts';
import { TRON_ACTION_BODIES } from './action-bodies.ts';
import { tronHtlc } from './index.ts';
import { connectTronChain, tronAddressOfKey } from './runtime.ts';
import { tronSwapWallet } from './swap-wallet.ts';

/** A base58 Tron address written all in lower case (`T…` becomes `t…`). */
const LOWERCASED_TRON_ADDRESS = /^t[1-9a-z]{33}$/;

/** Tron chains: the TRC-20 HTLC on the TVM, a per-block watcher, offline-signed transactions through Tron's HTTP API. */
export const tronAdapter: ChainAdapter = {
  htlc: tronHtlc,
  normalizeParty: (chain, value) => tronHtlc.normalizeAddress(chain, value),
  // base58check exactly (a case change breaks the checksum), or the same address as 41-prefixed hex; and
  // all in lower case, which matches in any case: Garden's SDK looks a wallet's orders up lowercased.
  partyMatchKey: (_chain, value) => exactly(normalizeTronAddress(value)) ?? (LOWERCASED_TRON_ADDRESS.test(value) ? anyCase(value) : undefined),
  txHashMatchKey: hexHashKey(/^[0-9a-fA-F]{64}$/),
  partyDescription: 'a valid tron address',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  quoteInitiate: (_chain, data) => ({ type: 'tron', approval_transaction: data.approval_transaction, initiate_transaction: data.initiate_transaction }),
  aggregator: {
    vmType: 'tvm',
    chainId: (chain) => tronChainId(chain.id).toString(),
    fundingSteps: htlcFundingSteps,
    refundSteps: (asset, swapId, amount) => [
      htlcRefundStep(asset, amount, {
        to: asset.htlc.address,
        value: '0',
        data: encodeFunctionData({ abi: htlcAbi, functionName: 'refund', args: [`0x${swapId}`] }),
        gas_limit: String(APPROVE_FEE_LIMIT),
        chain_id: Number(tronChainId(asset.chain.id)),
      }),
    ],
  },
  // The relayer pays the energy of every action it sends.
  servicePays: () => true,
  contractSchemas: {
    'tron:htlc_trc20': loadArtifact('tron', 'TronHTLC').abi,
    'tron:trc20': erc20Abi,
  },
  actionBodies: TRON_ACTION_BODIES,
  // The initiator's consent to an instant refund is its signature of the Refund(orderId) digest.
  servesInstantRefundHash: true,
  deployer: async () => (await import('./deploy.ts')).tronDeployer,
  preflight: async () => (await import('./preflight.ts')).tronPreflight,
  partyOfKey: (_chain, privateKey) => tronAddressOfKey(privateKey),
  swapWallet: tronSwapWallet,
  connect: connectTronChain,
};
