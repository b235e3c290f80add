import { evmSwapWallet } from './swap-wallet.ts';
import { evmFeeClaims } from './fee-claims.ts';
import { encodeFunctionData, erc20Abi, numberToHex } from 'viem';
import { htlcFundingSteps, htlcRefundStep } from '../aggregator-steps.ts';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';
import { privateKeyToAccount } from 'viem/accounts';
import { loadArtifact } from '../solidity-htlc/artifacts.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import type { ChainAdapter } from '../adapter.ts';
import { EVM_ACTION_BODIES } from './action-bodies.ts';
import { anyCase, hexHashKey } from '../family.ts';
import { evmChainId, evmHtlc, normalizeEvmAddress } from './index.ts';
import { connectEvmChain } from './runtime.ts';
import { verifyEvmAddressProof, signEvmAddressProof } from './address-proof.ts';

/** EVM chains: the HTLC and NativeHTLC contracts, a log watcher, and per-account transaction senders. */
export const evmAdapter: ChainAdapter = {
  htlc: evmHtlc,
  normalizeParty: (_chain, value) => normalizeEvmAddress(value),
  // Hex in any case; a mixed-case address with a wrong checksum still names the address.
  partyMatchKey: (_chain, value) => anyCase(normalizeEvmAddress(value.toLowerCase())),
  txHashMatchKey: hexHashKey(/^0x[0-9a-fA-F]{64}$/),
  partyDescription: 'a valid EVM address (hex, EIP-55 checksum)',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  quoteInitiate: (chain, data) => ({
    type: 'evm',
    chain_id: Number(evmChainId(chain)),
    approval_transaction: data.approval_transaction,
    initiate_transaction: data.initiate_transaction,
    core_to_evm_transfer: null,
  }),
  aggregator: {
    vmType: 'evm',
    chainId: (chain) => evmChainId(chain).toString(),
    fundingSteps: htlcFundingSteps,
    refundSteps: (asset, swapId, amount) => [
      htlcRefundStep(asset, amount, {
        to: asset.htlc.address,
        value: '0x0',
        data: encodeFunctionData({ abi: htlcAbi, functionName: 'refund', args: [`0x${swapId}`] }),
        gas_limit: numberToHex(100_000),
        chain_id: Number(evmChainId(asset.chain)),
      }),
    ],
  },
  // The relayer pays the gas of every action it sends.
  servicePays: () => true,
  contractSchemas: {
    'evm:htlc_erc20': loadArtifact('evm', 'HTLC').abi,
    'evm:htlc': loadArtifact('evm', 'NativeHTLC').abi,
    'evm:erc20': erc20Abi,
  },
  actionBodies: EVM_ACTION_BODIES,
  // The initiator's consent to an instant refund is its signature of the Refund(orderId) digest.
  servesInstantRefundHash: true,
  feeClaims: evmFeeClaims,
  deployer: async () => (await import('./deploy.ts')).evmDeployer,
  preflight: async () => (await import('./preflight.ts')).evmPreflight,
  verifyAddressProof: verifyEvmAddressProof,
  signAddressProof: signEvmAddressProof,
  partyOfKey: (_chain, privateKey) => privateKeyToAccount(privateKey).address,
  swapWallet: evmSwapWallet,
  connect: connectEvmChain,
};
