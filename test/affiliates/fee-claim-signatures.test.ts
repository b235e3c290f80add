// Claims signed ahead by the workers (fee_claim_signatures): a pass signs each affiliate's cumulative
// earnings over every app, only ever upwards, and an API without the fee signer's key serves them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { getAddress, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ClaimSigner } from '../../src/affiliates/claims.ts';
import { buildApi } from '../../src/api/app.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { startService } from '../../src/service.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import { accrueOrderFees } from '../../src/store/affiliates.ts';
import { createApp } from '../../src/store/apps.ts';
import type { Store } from '../../src/store/database.ts';
import { feeClaimSignature, saveFeeClaimSignature } from '../../src/store/fee-claim-signatures.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { TEST_PRICES } from '../helpers/api.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { chainlessServiceConfig } from '../helpers/service-config.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';

const CHAIN = 'ethereum_localnet';
const USDC = 'ethereum_localnet:usdc';
const ETH = 'ethereum_localnet:eth';
const CONTRACT = getAddress(`0x${randomBytes(20).toString('hex')}`);
const registry = localnetRegistry();
const feeSignerKey = privateKeyOf(devAccount('feeSigner'));
const newAffiliate = (): Address => privateKeyToAccount(generatePrivateKey()).address;

async function signerOf(signature: string, affiliate: Address, cumulativeAmount: bigint, contract: Address = CONTRACT): Promise<Address> {
  return recoverTypedDataAddress({
    domain: { name: 'FeeClaim', version: '1', chainId: 31337, verifyingContract: contract },
    types: { Claim: [{ name: 'affiliate', type: 'address' }, { name: 'token', type: 'address' }, { name: 'cumulativeAmount', type: 'uint256' }] },
    primaryType: 'Claim',
    message: { affiliate, token: getAddress(registry.asset(USDC)!.token.address), cumulativeAmount },
    signature: signature as Hex,
  });
}

describeEachStore('fee claim signatures', (kind) => {
  let store: Store;
  let appIds: string[];
  let key: string;
  let now = Date.parse('2030-01-01T00:00:00Z');
  const clock = { now: () => now };

  before(async () => {
    store = await openTestStore(kind);
    const seeded = await seedBasics(store.db, registry);
    key = seeded.key;
    appIds = [seeded.app.id, (await createApp(store.db, { name: 'second app' })).app.id];
  });
  after(() => store?.close());

  async function accrue(appId: string, affiliate: string, amount: bigint, asset = USDC): Promise<void> {
    const order = sampleOrder(appId, { affiliateFees: [{ address: affiliate, fee: 10, asset, amount }] });
    await insertOrder(store.db, order);
    assert.equal(await accrueOrderFees(store.db, order.id), 1);
  }
  const signedAt = async (affiliate: string) =>
    (await store.db.selectFrom('fee_claim_signatures').select('signed_at').where('affiliate', '=', affiliate).executeTakeFirstOrThrow()).signed_at;

  test('a worker pass signs the cumulative earnings over every app; more earnings raise it; a pass with nothing new writes nothing', async () => {
    const worker = new ClaimSigner(registry, { feeSignerKey, contracts: { [CHAIN]: CONTRACT }, db: store.db, clock });
    const affiliate = newAffiliate();
    await accrue(appIds[0]!, affiliate, 1_500_000n);
    await accrue(appIds[1]!, affiliate, 500_000n);
    await accrue(appIds[0]!, affiliate, 7n, ETH); // FeeClaim pays no native coin: never signed

    assert.equal(await worker.signOutstanding(), 1);
    const first = await feeClaimSignature(store.db, affiliate, USDC);
    assert.equal(first?.cumulativeAmount, 2_000_000n);
    assert.equal(first.contract, CONTRACT);
    assert.equal(await signerOf(first.signature, affiliate, 2_000_000n), devAccount('feeSigner').address);
    assert.equal(new Date(await signedAt(affiliate)).getTime(), now);
    assert.equal(await feeClaimSignature(store.db, affiliate, ETH), undefined);

    now += 60_000;
    assert.equal(await worker.signOutstanding(), 0);
    assert.deepEqual(await feeClaimSignature(store.db, affiliate, USDC), first);
    assert.equal(new Date(await signedAt(affiliate)).getTime(), now - 60_000);

    await accrue(appIds[1]!, affiliate, 300_000n);
    assert.equal(await worker.signOutstanding(), 1);
    const second = await feeClaimSignature(store.db, affiliate, USDC);
    assert.equal(second?.cumulativeAmount, 2_300_000n);
    assert.equal(await signerOf(second.signature, affiliate, 2_300_000n), devAccount('feeSigner').address);
    assert.equal(new Date(await signedAt(affiliate)).getTime(), now);

    // Never lowered, even when asked to.
    assert.equal(await saveFeeClaimSignature(store.db, { ...first, affiliate, asset: USDC }, new Date(now)), false);
    assert.deepEqual(await feeClaimSignature(store.db, affiliate, USDC), second);

    // A new claim contract: the same cumulative amount is signed again for it.
    const moved = getAddress(`0x${randomBytes(20).toString('hex')}`);
    assert.equal(await new ClaimSigner(registry, { feeSignerKey, contracts: { [CHAIN]: moved }, db: store.db, clock }).signOutstanding(), 1);
    const again = await feeClaimSignature(store.db, affiliate, USDC);
    assert.equal(again?.contract, moved);
    assert.equal(again.cumulativeAmount, 2_300_000n);
    assert.equal(await signerOf(again.signature, affiliate, 2_300_000n, moved), devAccount('feeSigner').address);
    assert.equal(await worker.signOutstanding(), 1, 'and back');
  });

  test('an API without the fee signer key serves the stored claim once it covers the earnings (what claim() is called with); none when it is claimed', async () => {
    const worker = new ClaimSigner(registry, { feeSignerKey, contracts: { [CHAIN]: CONTRACT }, db: store.db, clock });
    const api = await buildApi({
      store,
      registry,
      prices: new StaticPriceSource(TEST_PRICES),
      secrets: new SecretBox(randomBytes(32)),
      version: 'test',
      claims: new ClaimSigner(registry, { contracts: { [CHAIN]: CONTRACT }, db: store.db }),
    });
    const affiliate = newAffiliate();
    const earnings = async (): Promise<Record<string, string>> => {
      const res = await api.inject({ url: '/v2/apps/earnings', headers: { 'service-app-id': key } });
      assert.equal(res.statusCode, 200, res.body);
      const rows = res.json<{ result: Array<Record<string, string>> }>().result.filter((r) => r.affiliate === affiliate);
      assert.equal(rows.length, 1);
      return rows[0]!;
    };
    try {
      await accrue(appIds[0]!, affiliate, 1_000_000n);
      assert.equal('claim_signature' in (await earnings()), false, 'nothing signed yet');

      await worker.signOutstanding();
      const stored = (await feeClaimSignature(store.db, affiliate, USDC))!;
      const served = await earnings();
      assert.equal(served.total_earnings, '1000000');
      assert.equal(served.claim_amount, '1000000');
      assert.equal(served.claim_amount_usd, '1.00');
      assert.equal(served.claim_signature, stored.signature);
      assert.equal(served.claim_contract, CONTRACT);

      await accrue(appIds[1]!, affiliate, 250_000n);
      const lagging = await earnings();
      assert.equal(lagging.total_earnings, '1250000');
      assert.equal('claim_signature' in lagging, false, 'a signature over 1000000 would make claim(..., total_earnings, ...) revert: none until the workers sign 1250000');

      // Without an RPC the stored total_claimed counts as paid.
      await store.db.updateTable('affiliate_earnings').set({ total_claimed: '1000000' }).where('affiliate', '=', affiliate).where('app_id', '=', appIds[0]!).execute();
      await worker.signOutstanding();
      const raised = await earnings();
      assert.equal(raised.claim_amount, '250000');
      assert.equal(raised.claim_signature, (await feeClaimSignature(store.db, affiliate, USDC))!.signature);
    } finally {
      await api.close();
    }
  });

  test('with the key a claim signed on request is stored too, so a worker pass finds nothing to sign', async () => {
    const keyed = new ClaimSigner(registry, { feeSignerKey, contracts: { [CHAIN]: CONTRACT }, db: store.db, clock });
    const affiliate = newAffiliate();
    await accrue(appIds[0]!, affiliate, 40_000n);
    const claim = await keyed.claimFor({ affiliate, asset: USDC, totalEarned: 40_000n, totalClaimed: 0n });
    assert.equal(claim?.cumulativeAmount, 40_000n);
    assert.deepEqual(await feeClaimSignature(store.db, affiliate, USDC), { affiliate, asset: USDC, contract: CONTRACT, cumulativeAmount: 40_000n, signature: claim.signature });
    assert.equal(await keyed.signOutstanding(), 0);
  });
});

test('startService: a workers instance with the fee signer key signs ahead; an API instance, keyless, serves the claim', { skip: !process.env.DATABASE_URL && !process.env.CI && 'DATABASE_URL is not set' }, async () => {
  const { config: base, drop } = await chainlessServiceConfig('postgres', { chains: { [CHAIN]: { fee_claim: CONTRACT } } });
  const config = { ...base, keys: { ...base.keys, feeSigner: feeSignerKey } };
  // The earnings exist before the workers start: their first pass signs them.
  const api = await startService({ ...config, secretPublicKey: new SecretBox(Buffer.from(process.env.HASHLOCK_SECRET_KEY!, 'hex')).publicKey }, { role: 'api' });
  try {
    const { app, key } = await createApp(api.store.db, { name: 'affiliated' });
    const affiliate = newAffiliate();
    const order = sampleOrder(app.id, { affiliateFees: [{ address: affiliate, fee: 10, asset: USDC, amount: 123_000n }] });
    await insertOrder(api.store.db, order);
    await accrueOrderFees(api.store.db, order.id);
    const workers = await startService(config, { role: 'workers' });
    try {
      const entry = await until(
        'the API instance to serve a claim',
        async () => {
          const res = await fetch(`${api.url}/v2/apps/earnings`, { headers: { 'service-app-id': key } });
          const row = ((await res.json()) as { result: Array<Record<string, string>> }).result[0];
          return row?.claim_signature ? row : undefined;
        },
        15_000,
        50,
      );
      assert.equal(entry.claim_amount, '123000');
      assert.equal(await signerOf(entry.claim_signature!, affiliate, 123_000n), devAccount('feeSigner').address);
    } finally {
      await workers.stop();
    }
  } finally {
    await api.stop();
    await drop();
  }
});
