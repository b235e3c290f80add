// Affiliate fee claims on EVM chains: the service's EIP-712 signature over (affiliate, token, cumulative
// amount) for FeeClaim (contracts/FeeClaim.sol), which pays `cumulative - claimed(affiliate, token)`.
import { createPublicClient, getAddress, http, isAddress, zeroAddress, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Claim, ClaimableRow, FeeClaimAccess, FeeClaimSigner } from '../adapter.ts';
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
] as const;

const CLAIM_TYPES = {
  Claim: [
    { name: 'affiliate', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'cumulativeAmount', type: 'uint256' },
  ],
} as const;

/**
 * The claims of one chain's FeeClaim contract; undefined when `contract` is no address. Without an RPC
 * the stored total counts as already claimed; with one, the contract's `claimed` does.
 */
export function evmFeeClaims({ chain, feeSignerKey, contract, rpcUrl }: FeeClaimAccess): FeeClaimSigner | undefined {
  if (!isAddress(contract)) return undefined;
  const verifyingContract = getAddress(contract);
  const account = privateKeyToAccount(feeSignerKey);
  const chainId = Number(chain.id.split(':')[1]);
  let client: PublicClient | undefined;
  const claimed = (affiliate: Address, token: Address, stored: bigint): Promise<bigint> => {
    if (!rpcUrl) return Promise.resolve(stored);
    client ??= createPublicClient({ transport: http(rpcUrl), cacheTime: 0 });
    return client.readContract({ address: verifyingContract, abi: FEE_CLAIM_ABI, functionName: 'claimed', args: [affiliate, token] });
  };
  return {
    async claimFor(row: ClaimableRow, asset: Asset): Promise<Claim | undefined> {
      if (!isAddress(row.affiliate) || !isAddress(asset.token.address)) return undefined;
      const token = getAddress(asset.token.address);
      if (token === zeroAddress) return undefined; // FeeClaim pays ERC-20 tokens only
      const affiliate = getAddress(row.affiliate);
      const cumulativeAmount = row.totalEarned;
      const already = await claimed(affiliate, token, row.totalClaimed);
      if (cumulativeAmount <= already) return undefined;
      const signature: Hex = await account.signTypedData({
        domain: { name: 'FeeClaim', version: '1', chainId, verifyingContract },
        types: CLAIM_TYPES,
        primaryType: 'Claim',
        message: { affiliate, token, cumulativeAmount },
      });
      return { amount: cumulativeAmount - already, cumulativeAmount, signature, contract: verifyingContract };
    },
  };
}
