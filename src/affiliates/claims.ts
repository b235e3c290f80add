// Affiliate fee claims: each chain with a claim contract (`chains.<key>.fee_claim`) signs the claims of
// its earnings through its family (`ChainAdapter.feeClaims`).
import type { Hex } from 'viem';
import { chainAdapter } from '../chains/adapters.ts';
import type { Claim, ClaimableRow, ClaimPaid, FeeClaimSigner } from '../chains/adapter.ts';
import type { Registry } from '../chains/registry.ts';

export type { Claim, ClaimableRow, ClaimPaid } from '../chains/adapter.ts';

export interface ClaimSignerOptions {
  /** The key the claim contracts name as their signer. */
  feeSignerKey: Hex;
  /** The claim contract by chain key; chains without one have no claims. */
  contracts: Readonly<Record<string, string>>;
  /** The RPC by chain key, to read what was claimed already; without one the stored total is used. */
  rpcUrls?: Readonly<Record<string, string>>;
}

export class ClaimSigner {
  private readonly byChain = new Map<string, FeeClaimSigner>();

  constructor(
    private readonly registry: Registry,
    options: ClaimSignerOptions,
  ) {
    for (const [key, contract] of Object.entries(options.contracts)) {
      const chain = registry.chain(key);
      const rpcUrl = options.rpcUrls?.[key];
      const signer = chain && chainAdapter(chain)?.feeClaims?.({ chain, feeSignerKey: options.feeSignerKey, contract, ...(rpcUrl ? { rpcUrl } : {}) });
      if (signer) this.byChain.set(key, signer);
    }
  }

  /**
   * The claim open for one earnings row, or undefined when nothing is claimable (or no contract exists).
   * `row.totalEarned` must be the affiliate's earnings through every app (`listEarnings`): the contract
   * pays per affiliate and token, so a signature over one app's total would pay too little, or nothing.
   */
  async claimFor(row: ClaimableRow): Promise<Claim | undefined> {
    const asset = this.registry.asset(row.asset);
    return asset && this.byChain.get(asset.chain.key)?.claimFor(row, asset);
  }

  /** The claims the contract paid `affiliate` in the asset `assetId`, oldest first; none on a chain without a contract. */
  async claimsPaid(affiliate: string, assetId: string): Promise<ClaimPaid[]> {
    const asset = this.registry.asset(assetId);
    return (asset && (await this.byChain.get(asset.chain.key)?.claimsPaid(affiliate, asset))) ?? [];
  }
}
