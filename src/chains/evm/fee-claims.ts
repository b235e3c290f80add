// Affiliate fee claims on EVM chains: the service's EIP-712 signature over (affiliate, token, cumulative
// amount) for FeeClaim (contracts/FeeClaim.sol), which pays `cumulative - claimed(affiliate, token)`, and
// the claims it paid (its `Claimed` events), for the affiliate history.
import { createPublicClient, getAddress, http, isAddress, zeroAddress, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AppError } from '../../errors.ts';
import type { ClaimPaid, FeeClaimAccess, FeeClaimSigner } from '../adapter.ts';
import type { Asset } from '../registry.ts';

export const FEE_CLAIM_ABI = [
  {
    type: 'function',
    name: 'claimed',
    stateMutability: 'view',
    inputs: [
      { name: 'affiliate', type: 'address' },
      { name: 'token', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'event',
    name: 'Claimed',
    inputs: [
      { name: 'affiliate', type: 'address', indexed: true },
      { name: 'token', type: 'address', indexed: true },
      { name: 'amount', type: 'uint256', indexed: false },
      { name: 'cumulativeAmount', type: 'uint256', indexed: false },
    ],
  },
] as const;

const CLAIMED_EVENT = FEE_CLAIM_ABI[1];

/** Block timestamps kept per chain; claims are few. */
const MAX_CACHED_BLOCKS = 10_000;

const CLAIM_TYPES = {
  Claim: [
    { name: 'affiliate', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'cumulativeAmount', type: 'uint256' },
  ],
} as const;

/**
 * The claims of one chain's FeeClaim contract; undefined when `contract` is no address. Without an RPC
 * the stored total counts as already claimed; with one, the contract's `claimed` does. Without the fee
 * signer's key it signs nothing.
 */
export function evmFeeClaims({ chain, feeSignerKey, contract, rpcUrl }: FeeClaimAccess): FeeClaimSigner | undefined {
  if (!isAddress(contract)) return undefined;
  const verifyingContract = getAddress(contract);
  const account = feeSignerKey && privateKeyToAccount(feeSignerKey);
  const chainId = Number(chain.id.split(':')[1]);
  let client: PublicClient | undefined;
  const rpc = (url: string): PublicClient => (client ??= createPublicClient({ transport: http(url), cacheTime: 0 }));
  // By hash: a block replaced in a reorg has its own time.
  const blockTimes = new Map<Hex, number>();
  const blockTime = async (url: string, blockHash: Hex): Promise<number> => {
    const known = blockTimes.get(blockHash);
    if (known !== undefined) return known;
    const block = await rpc(url).getBlock({ blockHash });
    if (blockTimes.size >= MAX_CACHED_BLOCKS) blockTimes.clear();
    blockTimes.set(blockHash, Number(block.timestamp));
    return Number(block.timestamp);
  };
  return {
    contract: verifyingContract,

    async claimed(affiliate: string, asset: Asset, stored: bigint): Promise<bigint | undefined> {
      const parties = claimParties(affiliate, asset);
      if (!parties) return undefined;
      if (!rpcUrl) return stored;
      return rpc(rpcUrl).readContract({ address: verifyingContract, abi: FEE_CLAIM_ABI, functionName: 'claimed', args: [parties.affiliate, parties.token] });
    },

    async sign(affiliate: string, asset: Asset, cumulativeAmount: bigint): Promise<string | undefined> {
      const parties = claimParties(affiliate, asset);
      if (!parties || !account) return undefined;
      return account.signTypedData({
        domain: { name: 'FeeClaim', version: '1', chainId, verifyingContract },
        types: CLAIM_TYPES,
        primaryType: 'Claim',
        message: { ...parties, cumulativeAmount },
      });
    },

    async claimsPaid(affiliate: string, asset: Asset): Promise<ClaimPaid[]> {
      const parties = claimParties(affiliate, asset);
      if (!parties || !rpcUrl) return [];
      try {
        // From the first block: the events are filtered by both indexed parties, so they are few.
        const logs = await rpc(rpcUrl).getLogs({
          address: verifyingContract,
          event: CLAIMED_EVENT,
          args: { affiliate: parties.affiliate, token: parties.token },
          fromBlock: 0n,
          toBlock: 'latest',
          strict: true,
        });
        const paid = await Promise.all(
          logs.map(async (log): Promise<ClaimPaid> => ({
            txHash: log.transactionHash,
            logIndex: log.logIndex,
            blockNumber: log.blockNumber,
            timestamp: await blockTime(rpcUrl, log.blockHash),
            amount: log.args.amount,
            cumulativeAmount: log.args.cumulativeAmount,
          })),
        );
        return paid.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
      } catch (err) {
        throw new AppError('chain_unavailable', `cannot read the claims paid on ${asset.chain.key}`, { cause: err });
      }
    },
  };
}

/** The affiliate and token as FeeClaim names them, or undefined when it cannot pay them (not addresses, the native coin). */
function claimParties(affiliate: string, asset: Asset): { affiliate: Address; token: Address } | undefined {
  if (!isAddress(affiliate) || !isAddress(asset.token.address)) return undefined;
  const token = getAddress(asset.token.address);
  if (token === zeroAddress) return undefined; // FeeClaim pays ERC-20 tokens only
  return { affiliate: getAddress(affiliate), token };
}
