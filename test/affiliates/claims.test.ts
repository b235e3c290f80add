// Affiliate fee claims against a real FeeClaim on anvil: the earnings read carries the service's
// signature, FeeClaim pays exactly claim_amount with it, and the fields follow what was claimed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createWalletClient, erc20Abi, http, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ClaimSigner } from '../../src/affiliates/claims.ts';
import type { buildApi } from '../../src/api/app.ts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import type { AnvilNode } from '../../src/localnet/evm/anvil.ts';
import type { EvmDeployment } from '../../src/localnet/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { accrueOrderFees } from '../../src/store/affiliates.ts';
import type { Store } from '../../src/store/database.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { apiWithClaims, localChain as chain, startFeeClaimChain } from '../helpers/fee-claim-chain.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';

const CHAIN = 'ethereum_localnet';
const USDC = 'ethereum_localnet:usdc';
const registry = localnetRegistry();
let node: AnvilNode;
let deployment: EvmDeployment;
let client: PublicClient;

before(async () => {
  ({ node, deployment, client } = await startFeeClaimChain(registry, CHAIN));
});
after(() => node?.stop());

const usdcBalance = (address: Address) =>
  client.readContract({ address: deployment.contracts.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

test('ClaimSigner: no contract on the chain, a non-EVM affiliate, or nothing unclaimed: no claim; without RPC the stored total counts', async () => {
  const feeSignerKey = privateKeyOf(devAccount('feeSigner'));
  const affiliate = privateKeyToAccount(generatePrivateKey()).address;
  const none = new ClaimSigner(registry, { feeSignerKey, contracts: {} });
  assert.equal(await none.claimFor({ affiliate, asset: USDC, totalEarned: 10n, totalClaimed: 0n }), undefined);
  const offline = new ClaimSigner(registry, { feeSignerKey, contracts: { [CHAIN]: deployment.contracts.feeClaim } });
  assert.equal(await offline.claimFor({ affiliate: 'bc1qnotevm', asset: USDC, totalEarned: 10n, totalClaimed: 0n }), undefined);
  assert.equal(await offline.claimFor({ affiliate, asset: USDC, totalEarned: 10n, totalClaimed: 10n }), undefined);
  const claim = await offline.claimFor({ affiliate, asset: USDC, totalEarned: 10n, totalClaimed: 4n });
  assert.equal(claim?.amount, 6n);
  assert.equal(claim?.cumulativeAmount, 10n);
  assert.equal(claim?.contract, deployment.contracts.feeClaim);
});

describeEachStore('affiliate fee claims', (kind) => {
  let store: Store;
  let api: Awaited<ReturnType<typeof buildApi>>;
  let key: string;
  let appId: string;
  const affiliate = privateKeyToAccount(generatePrivateKey()).address;

  before(async () => {
    store = await openTestStore(kind);
    const seeded = await seedBasics(store.db, registry);
    key = seeded.key;
    appId = seeded.app.id;
    api = await apiWithClaims(store, registry, CHAIN, { node, deployment });
    await api.ready();
  });
  after(async () => {
    await api?.close();
    await store?.close();
  });

  async function accrue(amount: bigint): Promise<void> {
    const order = sampleOrder(appId, { affiliateFees: [{ address: affiliate, fee: 10, asset: USDC, amount }] });
    await insertOrder(store.db, order);
    assert.equal(await accrueOrderFees(store.db, order.id), 1);
  }

  async function earnings(): Promise<Record<string, any>> {
    const res = await api.inject({ url: '/v2/apps/earnings', headers: { 'service-app-id': key } });
    assert.equal(res.statusCode, 200, res.body);
    const rows = res.json<{ result: Array<Record<string, any>> }>().result.filter((r) => r.affiliate === affiliate);
    assert.equal(rows.length, 1);
    return rows[0]!;
  }

  async function claim(entry: Record<string, any>): Promise<void> {
    const submitter = createWalletClient({ account: devAccount('deployer'), chain: chain(node.rpcUrl), transport: http(node.rpcUrl) });
    const hash = await submitter.writeContract({
      address: entry.claim_contract as Address,
      abi: contractArtifact('FeeClaim').abi,
      functionName: 'claim',
      args: [affiliate, deployment.contracts.usdc, BigInt(entry.total_earnings as string), entry.claim_signature as Hex],
    });
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  }

  test('earnings carry a claim FeeClaim honours; after claiming the fields disappear; new fees claim only the difference', async () => {
    await accrue(1_500_000n);
    await accrue(500_000n);
    const first = await earnings();
    assert.equal(first.total_earnings, '2000000');
    assert.equal(first.claim_amount, '2000000');
    assert.equal(first.claim_amount_usd, '2.00');
    assert.equal(first.claim_contract, deployment.contracts.feeClaim);
    assert.match(first.claim_signature, /^0x[0-9a-f]{130}$/);

    const before = await usdcBalance(affiliate);
    await claim(first);
    assert.equal((await usdcBalance(affiliate)) - before, 2_000_000n, 'the affiliate received exactly claim_amount');

    const claimed = await earnings();
    assert.equal(claimed.total_earnings, '2000000');
    for (const field of ['claim_amount', 'claim_amount_usd', 'claim_signature', 'claim_contract']) assert.equal(field in claimed, false, field);

    await accrue(300_000n);
    const second = await earnings();
    assert.equal(second.total_earnings, '2300000');
    assert.equal(second.claim_amount, '300000');
    assert.equal(second.claim_amount_usd, '0.30');
    const mid = await usdcBalance(affiliate);
    await claim(second);
    assert.equal((await usdcBalance(affiliate)) - mid, 300_000n);
    assert.equal('claim_amount' in (await earnings()), false);
  });

  test('an API without the key serves the claim a worker pass stored, and FeeClaim pays it', async () => {
    const keyless = await apiWithClaims(store, registry, CHAIN, { node, deployment }, { keyless: true });
    try {
      await accrue(400_000n);
      const worker = new ClaimSigner(registry, { feeSignerKey: privateKeyOf(devAccount('feeSigner')), contracts: { [CHAIN]: deployment.contracts.feeClaim }, db: store.db });
      assert.ok((await worker.signOutstanding()) >= 1);
      const read = async () => {
        const res = await keyless.inject({ url: '/v2/apps/earnings', headers: { 'service-app-id': key } });
        return res.json<{ result: Array<Record<string, any>> }>().result.find((r) => r.affiliate === affiliate)!;
      };
      const entry = await read();
      assert.equal(entry.total_earnings, '2700000');
      assert.equal(entry.claim_amount, '400000', 'the contract paid 2300000 already');
      const before = await usdcBalance(affiliate);
      await claim(entry);
      assert.equal((await usdcBalance(affiliate)) - before, 400_000n);
      assert.equal('claim_amount' in (await read()), false);
    } finally {
      await keyless.close();
    }
  });
});
