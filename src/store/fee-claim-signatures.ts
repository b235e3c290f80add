// The fee signer's latest claim per affiliate and fee asset (`fee_claim_signatures`): written by the
// worker instances (and by an instance that signs on request), served by every API instance.
import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface FeeClaimSignature {
  affiliate: string;
  asset: string;
  /** The claim contract the signature is for. */
  contract: string;
  /** What the signature lets the affiliate have claimed in total, base units. */
  cumulativeAmount: bigint;
  signature: string;
}

/** An affiliate's earnings in an asset (every app) beyond what its stored signature covers. */
export interface UnsignedEarnings {
  affiliate: string;
  asset: string;
  /** Earned through every app's orders, base units. */
  totalEarned: bigint;
}

export async function feeClaimSignature(db: Db, affiliate: string, asset: string): Promise<FeeClaimSignature | undefined> {
  const row = await db
    .selectFrom('fee_claim_signatures')
    .select(['affiliate', 'asset', 'contract', 'cumulative_amount', 'signature'])
    .where('affiliate', '=', affiliate)
    .where('asset', '=', asset)
    .executeTakeFirst();
  return row && { affiliate: row.affiliate, asset: row.asset, contract: row.contract, cumulativeAmount: BigInt(row.cumulative_amount), signature: row.signature };
}

/**
 * Stores `claim` unless the stored one covers as much for the same contract: the cumulative amount never
 * goes down (a signature for another contract is replaced by one of at least its amount). Returns whether
 * it was written.
 */
export async function saveFeeClaimSignature(db: Db, claim: FeeClaimSignature, signedAt: Date): Promise<boolean> {
  const written = await db
    .insertInto('fee_claim_signatures')
    .values({
      affiliate: claim.affiliate,
      asset: claim.asset,
      contract: claim.contract,
      cumulative_amount: claim.cumulativeAmount.toString(),
      signature: claim.signature,
      signed_at: signedAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['affiliate', 'asset'])
        .doUpdateSet((eb) => ({
          contract: eb.ref('excluded.contract'),
          cumulative_amount: eb.ref('excluded.cumulative_amount'),
          signature: eb.ref('excluded.signature'),
          signed_at: eb.ref('excluded.signed_at'),
        }))
        .where((eb) =>
          eb.or([
            eb('excluded.cumulative_amount', '>', eb.ref('fee_claim_signatures.cumulative_amount')),
            eb.and([
              eb('excluded.contract', '<>', eb.ref('fee_claim_signatures.contract')),
              eb('excluded.cumulative_amount', '>=', eb.ref('fee_claim_signatures.cumulative_amount')),
            ]),
          ]),
        ),
    )
    .returning('affiliate')
    .executeTakeFirst();
  return written !== undefined;
}

/**
 * The affiliates and assets among `contracts` (asset id -> its claim contract) whose earnings over every
 * app exceed what the stored signature covers, or whose signature names another contract.
 */
export async function unsignedEarnings(db: Db, contracts: ReadonlyMap<string, string>): Promise<UnsignedEarnings[]> {
  if (contracts.size === 0) return [];
  const { rows } = await sql<{ affiliate: string; asset: string; total_earned: string }>`
    select e.affiliate, e.asset, sum(e.total_earned)::text as total_earned
    from affiliate_earnings e
    join unnest(${[...contracts.keys()]}::text[], ${[...contracts.values()]}::text[]) as c (asset, contract) on c.asset = e.asset
    left join fee_claim_signatures s on s.affiliate = e.affiliate and s.asset = e.asset
    group by e.affiliate, e.asset, c.contract, s.contract, s.cumulative_amount
    having sum(e.total_earned) > coalesce(s.cumulative_amount, 0) or (s.contract <> c.contract and sum(e.total_earned) > 0)
    order by e.affiliate, e.asset`.execute(db);
  return rows.map((r) => ({ affiliate: r.affiliate, asset: r.asset, totalEarned: BigInt(r.total_earned) }));
}
