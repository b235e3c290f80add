// Affiliate fee claims: each chain with a claim contract (`chains.<key>.fee_claim`) signs the claims of
// its earnings through its family (`ChainAdapter.feeClaims`). An instance with the fee signer's key signs
// (a worker pass over every affiliate's earnings, and on request) and stores what it signs; one without
// it (an API instance) serves the stored claims.
import type { Hex } from 'viem';
import { chainAdapter } from '../chains/adapters.ts';
import type { Claim, ClaimableRow, ClaimPaid, FeeClaimSigner } from '../chains/adapter.ts';
import type { Asset, Registry } from '../chains/registry.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { feeClaimSignature, saveFeeClaimSignature, unsignedEarnings } from '../store/fee-claim-signatures.ts';

export type { Claim, ClaimableRow, ClaimPaid } from '../chains/adapter.ts';

export interface ClaimSignerOptions {
  /** The key the claim contracts name as their signer; without it the claims are the stored ones. */
  feeSignerKey?: Hex;
  /** The claim contract by chain key; chains without one have no claims. */
  contracts: Readonly<Record<string, string>>;
  /** The RPC by chain key, to read what was claimed already; without one the stored total is used. */
  rpcUrls?: Readonly<Record<string, string>>;
  /** Where signed claims are stored (and, without the key, read from); without it nothing is stored. */
  db?: Db;
  /** Stamps `signed_at` (default: the system clock). */
  clock?: Clock;
}

type Signed = Pick<Claim, 'cumulativeAmount' | 'signature'>;

export class ClaimSigner {
  private readonly byChain = new Map<string, FeeClaimSigner>();
  private readonly db: Db | undefined;
  private readonly clock: Clock;
  /** Whether this instance holds the fee signer's key. */
  readonly canSign: boolean;

  constructor(
    private readonly registry: Registry,
    options: ClaimSignerOptions,
  ) {
    this.db = options.db;
    this.clock = options.clock ?? systemClock;
    this.canSign = options.feeSignerKey !== undefined;
    const feeSignerKey = options.feeSignerKey ? { feeSignerKey: options.feeSignerKey } : {};
    for (const [key, contract] of Object.entries(options.contracts)) {
      const chain = registry.chain(key);
      const rpcUrl = options.rpcUrls?.[key];
      const signer = chain && chainAdapter(chain)?.feeClaims?.({ chain, ...feeSignerKey, contract, ...(rpcUrl ? { rpcUrl } : {}) });
      if (signer) this.byChain.set(key, signer);
    }
  }

  /**
   * The claim open for one earnings row, or undefined when nothing is claimable (or no contract exists).
   * `row.totalEarned` must be the affiliate's earnings through every app (`listEarnings`): the contract
   * pays per affiliate and token, so a signature over one app's total would pay too little, or nothing.
   * With the key the claim is signed for `totalEarned` (and stored); without it, it is the stored one
   * once a worker signed `totalEarned`: Garden's clients call `claim(affiliate, token, total_earnings,
   * claim_signature)`, which reverts for a signature over another amount.
   */
  async claimFor(row: ClaimableRow): Promise<Claim | undefined> {
    const asset = this.registry.asset(row.asset);
    const family = asset && this.byChain.get(asset.chain.key);
    if (!family) return undefined;
    const signed = this.canSign ? (await this.signAndStore(family, row.affiliate, asset, row.totalEarned))?.claim : await this.stored(family, row.affiliate, asset);
    if (!signed || signed.cumulativeAmount !== row.totalEarned) return undefined;
    const already = await family.claimed(row.affiliate, asset, row.totalClaimed);
    if (already === undefined || signed.cumulativeAmount <= already) return undefined;
    return { amount: signed.cumulativeAmount - already, ...signed, contract: family.contract };
  }

  /**
   * A worker pass: signs and stores a claim of the cumulative total for each affiliate and asset whose
   * earnings (every app) exceed what its stored signature covers. Returns how many it stored; none
   * without the key or a store.
   */
  async signOutstanding(signal?: AbortSignal): Promise<number> {
    if (!this.canSign || !this.db) return 0;
    const contracts = new Map<string, string>();
    for (const asset of this.registry.assets) {
      const family = this.byChain.get(asset.chain.key);
      if (family) contracts.set(asset.id, family.contract);
    }
    let stored = 0;
    for (const row of await unsignedEarnings(this.db, contracts)) {
      if (signal?.aborted) break;
      const asset = this.registry.asset(row.asset);
      const family = asset && this.byChain.get(asset.chain.key);
      if (family && (await this.signAndStore(family, row.affiliate, asset, row.totalEarned))?.saved) stored++;
    }
    return stored;
  }

  /** The claims the contract paid `affiliate` in the asset `assetId`, oldest first; none on a chain without a contract. */
  async claimsPaid(affiliate: string, assetId: string): Promise<ClaimPaid[]> {
    const asset = this.registry.asset(assetId);
    return (asset && (await this.byChain.get(asset.chain.key)?.claimsPaid(affiliate, asset))) ?? [];
  }

  /** Signs a claim of `cumulativeAmount` and stores it (`saved`: whether the store took it); undefined when the contract cannot pay them. */
  private async signAndStore(family: FeeClaimSigner, affiliate: string, asset: Asset, cumulativeAmount: bigint): Promise<{ claim: Signed; saved: boolean } | undefined> {
    const signature = await family.sign(affiliate, asset, cumulativeAmount);
    if (signature === undefined) return undefined;
    const saved =
      this.db !== undefined &&
      (await saveFeeClaimSignature(this.db, { affiliate, asset: asset.id, contract: family.contract, cumulativeAmount, signature }, new Date(this.clock.now())));
    return { claim: { cumulativeAmount, signature }, saved };
  }

  /** The stored claim, if it is for the contract the chain has now. */
  private async stored(family: FeeClaimSigner, affiliate: string, asset: Asset): Promise<Signed | undefined> {
    const stored = this.db && (await feeClaimSignature(this.db, affiliate, asset.id));
    return stored && stored.contract === family.contract ? { cumulativeAmount: stored.cumulativeAmount, signature: stored.signature } : undefined;
  }
}
