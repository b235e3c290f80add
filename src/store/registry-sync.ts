import type { Registry } from '../chains/registry.ts';
import type { Db } from './database.ts';

/**
 * Writes the registry's chains and assets to the database so orders can reference them. Rows the
 * registry no longer has stay (orders point at them) but are marked inactive.
 */
export async function syncRegistry(db: Db, registry: Registry): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const c of registry.chains) {
      const row = {
        key: c.key,
        id: c.id,
        family: c.family,
        name: c.name,
        native_asset_id: c.nativeAssetId,
        icon: c.icon,
        explorer_url: c.explorerUrl,
        block_time_ms: c.blockTimeMs,
        confirmation_target: c.confirmationTarget,
        source_timelock: BigInt(c.sourceTimelock),
        destination_timelock: BigInt(c.destinationTimelock),
        is_active: c.isActive,
        updated_at: new Date(),
      };
      await tx
        .insertInto('chains')
        .values(row)
        .onConflict((oc) => oc.column('key').doUpdateSet(row))
        .execute();
    }
    for (const a of registry.assets) {
      const row = {
        id: a.id,
        chain: a.chain.key,
        symbol: a.symbol,
        name: a.name,
        icon: a.icon,
        decimals: a.decimals,
        htlc_address: a.htlc.address,
        htlc_schema: a.htlc.schema,
        token_address: a.token.address,
        token_schema: a.token.schema,
        min_amount: a.minAmount,
        max_amount: a.maxAmount,
        price_id: a.priceId,
        is_active: a.isActive,
        listed_in: [...a.listedIn],
        updated_at: new Date(),
      };
      await tx
        .insertInto('assets')
        .values(row)
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    }
    const assetIds = registry.assets.map((a) => a.id);
    await tx.updateTable('assets').set({ is_active: false }).where('id', 'not in', assetIds).execute();
    const chainKeys = registry.chains.map((c) => c.key);
    await tx.updateTable('chains').set({ is_active: false }).where('key', 'not in', chainKeys).execute();
  });
}
