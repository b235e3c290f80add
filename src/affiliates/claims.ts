// Affiliate fee claims: the service's EIP-712 signature over (affiliate, token, cumulative amount) for
// FeeClaim (contracts/FeeClaim.sol), which pays `cumulative - claimed(affiliate, token)`.
import { createPublicClient, getAddress, http, isAddress, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from 'viem';
import type { Registry } from '../chains/registry.ts';

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

export interface ClaimSignerOptions {
  /** The key FeeClaim's `signer` names. */
  account: LocalAccount;
  /** FeeClaim's address by chain key; chains without one have no claims. */
  contracts: Readonly<Record<string, string>>;
  /** The RPC by chain key, to read `claimed(affiliate, token)`; without one the stored total is used. */
  rpcUrls?: Readonly<Record<string, string>>;
}

export interface ClaimableRow {
  affiliate: string;
  asset: string;
  totalEarned: bigint;
  totalClaimed: bigint;
}

export interface Claim {
  /** `cumulative - already claimed`, base units. */
  amount: bigint;
  cumulativeAmount: bigint;
  signature: Hex;
  contract: Address;
}

export class ClaimSigner {
  private readonly contracts: ReadonlyMap<string, Address>;

  constructor(
    private readonly registry: Registry,
    private readonly options: ClaimSignerOptions,
  ) {
    this.contracts = new Map(
      Object.entries(options.contracts).flatMap(([key, address]) => (isAddress(address) ? [[key, getAddress(address)] as const] : [])),
    );
  }

  get signer(): Address {
    return this.options.account.address;
  }

  /** The claim open for one earnings row, or undefined when nothing is claimable (or no contract exists). */
  async claimFor(row: ClaimableRow): Promise<Claim | undefined> {
    const asset = this.registry.asset(row.asset);
    // A chain without a FeeClaim contract (the config allows one only where the family has them) has no claims.
    const contract = asset && this.contracts.get(asset.chain.key);
    if (!asset || !contract || !isAddress(row.affiliate) || !isAddress(asset.token.address)) return undefined;
    const token = getAddress(asset.token.address);
    if (token === zeroAddress) return undefined; // FeeClaim pays ERC-20 tokens only
    const affiliate = getAddress(row.affiliate);
    const cumulativeAmount = row.totalEarned;
    const already = await this.claimed(asset.chain.key, contract, affiliate, token, row.totalClaimed);
    if (cumulativeAmount <= already) return undefined;
    const chainId = Number(asset.chain.id.split(':')[1]);
    const signature = await this.options.account.signTypedData({
      domain: { name: 'FeeClaim', version: '1', chainId, verifyingContract: contract },
      types: CLAIM_TYPES,
      primaryType: 'Claim',
      message: { affiliate, token, cumulativeAmount },
    });
    return { amount: cumulativeAmount - already, cumulativeAmount, signature, contract };
  }

  private async claimed(chainKey: string, contract: Address, affiliate: Address, token: Address, stored: bigint): Promise<bigint> {
    const client = this.client(chainKey);
    if (!client) return stored;
    return client.readContract({ address: contract, abi: FEE_CLAIM_ABI, functionName: 'claimed', args: [affiliate, token] });
  }

  private readonly clients = new Map<string, PublicClient>();

  private client(chainKey: string): PublicClient | undefined {
    const url = this.options.rpcUrls?.[chainKey];
    if (!url) return undefined;
    let client = this.clients.get(chainKey);
    if (!client) {
      client = createPublicClient({ transport: http(url), cacheTime: 0 });
      this.clients.set(chainKey, client);
    }
    return client;
  }
}
