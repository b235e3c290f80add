// The affiliate history against a real FeeClaim on anvil, with one affiliate earning through two apps:
// each app lists its own fees as credits and the affiliate's claims as debits, the claim signed for
// either app covers what the affiliate earned through both (and nothing is paid twice), and the
// history pages and totals agree with the chain.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createWalletClient, erc20Abi, http, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ClaimSigner } from '../../src/affiliates/claims.ts';
import type { buildApi } from '../../src/api/app.ts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { FEE_CLAIM_ABI } from '../../src/chains/evm/fee-claims.ts';
import type { AnvilNode } from '../../src/localnet/evm/anvil.ts';
import type { EvmDeployment } from '../../src/localnet/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { createApp } from '../../src/store/apps.ts';
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

type Json = Record<string, any>;

const usdcBalance = (address: Address) =>
  client.readContract({ address: deployment.contracts.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

/** The block time of a transaction as the history shows it. */
async function blockTimeOf(hash: Hex): Promise<string> {
  const receipt = await client.getTransactionReceipt({ hash });
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  return new Date(Number(block.timestamp) * 1000).toISOString().replace('.000Z', 'Z');
}

test('ClaimSigner.claimsPaid: none without a contract, an RPC, or an address FeeClaim can pay; a node out of reach is chain_unavailable', async () => {
  const feeSignerKey = privateKeyOf(devAccount('feeSigner'));
  const affiliate = privateKeyToAccount(generatePrivateKey()).address;
  const contracts = { [CHAIN]: deployment.contracts.feeClaim };
  assert.deepEqual(await new ClaimSigner(registry, { feeSignerKey, contracts: {} }).claimsPaid(affiliate, USDC), []);
  assert.deepEqual(await new ClaimSigner(registry, { feeSignerKey, contracts }).claimsPaid(affiliate, USDC), []);
  const online = new ClaimSigner(registry, { feeSignerKey, contracts, rpcUrls: { [CHAIN]: node.rpcUrl } });
  assert.deepEqual(await online.claimsPaid('bc1qnotevm', USDC), []);
  assert.deepEqual(await online.claimsPaid(affiliate, USDC), [], 'nothing claimed yet');
  const unreachable = new ClaimSigner(registry, { feeSignerKey, contracts, rpcUrls: { [CHAIN]: 'http://127.0.0.1:9' } });
  await assert.rejects(unreachable.claimsPaid(affiliate, USDC), (err: Error & { code?: string }) => err.code === 'chain_unavailable');
});

describeEachStore('affiliate history', (kind) => {
  let store: Store;
  let api: Awaited<ReturnType<typeof buildApi>>;
  const apps: Record<'a' | 'b' | 'empty', { id: string; key: string }> = {} as never;
  // X earns through both apps; Y through app b only.
  const x = privateKeyToAccount(generatePrivateKey()).address;
  const y = privateKeyToAccount(generatePrivateKey()).address;

  before(async () => {
    store = await openTestStore(kind);
    const seeded = await seedBasics(store.db, registry);
    apps.a = { id: seeded.app.id, key: seeded.key };
    for (const name of ['b', 'empty'] as const) {
      const { app, key } = await createApp(store.db, { name: `app ${name}` });
      apps[name] = { id: app.id, key };
    }
    api = await apiWithClaims(store, registry, CHAIN, { node, deployment });
    await api.ready();
  });
  after(async () => {
    await api?.close();
    await store?.close();
  });

  /** A completed order of `app` paying `affiliate` `amount` USDC; its id. */
  async function accrue(app: 'a' | 'b', affiliate: Address, amount: bigint): Promise<string> {
    const order = sampleOrder(apps[app].id, { affiliateFees: [{ address: affiliate, fee: 10, asset: USDC, amount }] });
    await insertOrder(store.db, order);
    assert.equal(await accrueOrderFees(store.db, order.id), 1);
    return order.id;
  }

  async function get(app: 'a' | 'b' | 'empty', url: string, status = 200): Promise<Json> {
    const res = await api.inject({ url, headers: { 'service-app-id': apps[app].key } });
    assert.equal(res.statusCode, status, res.body);
    return res.json<Json>();
  }

  async function earningsOf(app: 'a' | 'b', affiliate: Address): Promise<Json> {
    const rows = ((await get(app, '/v2/apps/earnings')).result as Json[]).filter((r) => r.affiliate === affiliate);
    assert.equal(rows.length, 1, `one ${affiliate} entry for app ${app}`);
    return rows[0]!;
  }

  /** Submits the entry's claim as Garden's documents do: the cumulative amount is total_earnings. */
  async function claim(entry: Json): Promise<Hex> {
    const submitter = createWalletClient({ account: devAccount('deployer'), chain: chain(node.rpcUrl), transport: http(node.rpcUrl) });
    const hash = await submitter.writeContract({
      address: entry.claim_contract as Address,
      abi: contractArtifact('FeeClaim').abi,
      functionName: 'claim',
      args: [entry.affiliate as Address, deployment.contracts.usdc, BigInt(entry.total_earnings as string), entry.claim_signature as Hex],
    });
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
    return hash;
  }

  async function history(app: 'a' | 'b' | 'empty', query = ''): Promise<Json> {
    const body = await get(app, `/v2/affiliates/history${query}`);
    assert.equal(body.status, 'Ok');
    return body.result as Json;
  }

  const credit = (id: string, affiliate: Address, amount: string, amountUsd: string) => ({ id, affiliate, amount, amount_usd: amountUsd, type: 'credit', asset: USDC });

  test('two apps, one affiliate: the claim covers both apps once; each history shows its credits and the shared debits', async () => {
    const a1 = await accrue('a', x, 1_000_000n);
    const a2 = await accrue('a', x, 500_000n);
    const b1 = await accrue('b', x, 2_000_000n);
    const b2 = await accrue('b', y, 700_000n);

    // Both apps offer the same claim: everything X earned, through either app.
    const entryA = await earningsOf('a', x);
    const entryB = await earningsOf('b', x);
    for (const entry of [entryA, entryB]) {
      assert.equal(entry.total_earnings, '3500000');
      assert.equal(entry.total_earnings_usd, '3.50');
      assert.equal(entry.claim_amount, '3500000');
      assert.equal(entry.claim_amount_usd, '3.50');
    }
    assert.equal(entryA.claim_signature, entryB.claim_signature, 'one cumulative amount, one signature');
    assert.equal((await earningsOf('b', y)).claim_amount, '700000');
    assert.equal(((await get('a', '/v2/apps/earnings')).result as Json[]).length, 1, "app a does not list y, whom only app b's orders paid");

    const before = await usdcBalance(x);
    const tx1 = await claim(entryA);
    assert.equal((await usdcBalance(x)) - before, 3_500_000n, 'x received what both apps earned it');

    // After the claim neither app offers x a claim; y's is untouched.
    for (const app of ['a', 'b'] as const) {
      const entry = await earningsOf(app, x);
      assert.equal(entry.total_earnings, '3500000');
      assert.equal('claim_amount' in entry, false, `app ${app}: nothing left to claim`);
    }
    assert.equal((await earningsOf('b', y)).claim_amount, '700000');

    // A later fee through app b: both apps offer exactly the difference.
    const b3 = await accrue('b', x, 300_000n);
    const laterA = await earningsOf('a', x);
    const laterB = await earningsOf('b', x);
    for (const entry of [laterA, laterB]) {
      assert.equal(entry.total_earnings, '3800000');
      assert.equal(entry.claim_amount, '300000');
      assert.equal(entry.claim_amount_usd, '0.30');
    }
    const tx2 = await claim(laterB);
    assert.equal((await usdcBalance(x)) - before, 3_800_000n, 'x was paid each fee once, in all');
    const onChain = await client.readContract({ address: deployment.contracts.feeClaim, abi: FEE_CLAIM_ABI, functionName: 'claimed', args: [x, deployment.contracts.usdc] });
    assert.equal(onChain, 3_800_000n);
    assert.equal('claim_amount' in (await earningsOf('a', x)), false);
    // The first claim's signature pays nothing more.
    await assert.rejects(
      createWalletClient({ account: devAccount('deployer'), chain: chain(node.rpcUrl), transport: http(node.rpcUrl) }).writeContract({
        address: entryA.claim_contract as Address,
        abi: contractArtifact('FeeClaim').abi,
        functionName: 'claim',
        args: [x, deployment.contracts.usdc, 3_500_000n, entryA.claim_signature as Hex],
      }),
      /NothingToClaim/,
    );

    const debits = [
      { id: tx2, affiliate: x, amount: '300000', amount_usd: '0.30', type: 'debit', asset: USDC, timestamp: await blockTimeOf(tx2) },
      { id: tx1, affiliate: x, amount: '3500000', amount_usd: '3.50', type: 'debit', asset: USDC, timestamp: await blockTimeOf(tx1) },
    ];
    const withoutTime = ({ timestamp: _, ...rest }: Json) => rest;
    const byId = (entries: Json[]) => [...entries].sort((p, q) => `${p.type}${p.id}`.localeCompare(`${q.type}${q.id}`));

    // App a: its two fees and x's two claims.
    const historyA = await history('a');
    assert.deepEqual(
      { ...historyA, data: undefined },
      { data: undefined, total_earned: '1.50', total_claimed: '3.80', page: 1, total_pages: 1, total_items: 4, per_page: 10 },
    );
    const dataA = historyA.data as Json[];
    assert.deepEqual(byId(dataA.filter((e) => e.type === 'credit').map(withoutTime)), byId([credit(a1, x, '1000000', '1.00'), credit(a2, x, '500000', '0.50')]));
    assert.deepEqual(dataA.filter((e) => e.type === 'debit'), debits, 'debits newest first, id the claim transaction, time its block');

    // App b: its three fees (x's and y's), and the same two claims of x; y has claimed nothing.
    const historyB = await history('b');
    assert.equal(historyB.total_items, 5);
    assert.equal(historyB.total_earned, '3.00');
    assert.equal(historyB.total_claimed, '3.80');
    const dataB = historyB.data as Json[];
    assert.deepEqual(
      byId(dataB.filter((e) => e.type === 'credit').map(withoutTime)),
      byId([credit(b1, x, '2000000', '2.00'), credit(b2, y, '700000', '0.70'), credit(b3, x, '300000', '0.30')]),
    );
    assert.deepEqual(dataB.filter((e) => e.type === 'debit'), debits, 'the same debits as app a');

    for (const data of [dataA, dataB]) {
      for (const entry of data) assert.match(entry.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const times = data.map((e) => Date.parse(e.timestamp));
      assert.deepEqual(times, [...times].sort((p, q) => q - p), 'newest first');
    }

    // The apps' credits for x add up to the earnings total, and the debits to what the contract paid.
    const creditsOfX = [...dataA, ...dataB].filter((e) => e.type === 'credit' && e.affiliate === x).reduce((s, e) => s + BigInt(e.amount), 0n);
    assert.equal(creditsOfX.toString(), laterA.total_earnings);
    assert.equal(debits.reduce((s, e) => s + BigInt(e.amount), 0n), onChain);

    // Pages: one entry each, the same entries in the same order; past the end, none.
    const pages: Json[] = [];
    for (let page = 1; page <= 4; page++) {
      const p = await history('a', `?page=${page}&per_page=1`);
      assert.deepEqual({ page: p.page, per_page: p.per_page, total_pages: p.total_pages, total_items: p.total_items }, { page, per_page: 1, total_pages: 4, total_items: 4 });
      assert.equal(p.total_earned, '1.50', 'totals cover every page');
      assert.equal(p.total_claimed, '3.80');
      assert.equal(p.data.length, 1);
      pages.push(p.data[0]);
    }
    assert.deepEqual(pages, dataA);
    const second = await history('b', '?page=2&per_page=3');
    assert.deepEqual(second.data, dataB.slice(3));
    assert.equal(second.total_pages, 2);
    const beyond = await history('a', '?page=5&per_page=1');
    assert.deepEqual(beyond.data, []);
    assert.equal(beyond.total_items, 4);

    // v3 serves the same.
    assert.deepEqual((await get('a', '/v3/affiliates/history')).result, historyA);
  });

  test('an app without earnings has an empty history', async () => {
    assert.deepEqual(await history('empty'), { data: [], total_earned: '0.00', total_claimed: '0.00', page: 1, total_pages: 0, total_items: 0, per_page: 10 });
  });

  test('bad query parameters are 400 naming the parameter; no key or an unknown one is 401', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?page=0', /invalid query parameter 'page': must be >= 1/],
      ['?page=abc', /'page'/],
      ['?per_page=0', /invalid query parameter 'per_page': must be >= 1/],
      ['?per_page=501', /invalid query parameter 'per_page': must be <= 500/],
      ['?per_page=1.5', /'per_page'/],
      ['?per_page=2&per_page=3', /'per_page'/],
    ];
    for (const [query, error] of cases) {
      const body = await get('a', `/v2/affiliates/history${query}`, 400);
      assert.equal(body.status, 'Error', query);
      assert.equal(body.code, 'invalid_request', query);
      assert.match(body.error, error, query);
    }
    for (const version of ['v2', 'v3']) {
      const none = await api.inject({ url: `/${version}/affiliates/history` });
      assert.equal(none.statusCode, 401);
      assert.match(none.json<Json>().error, /missing API key/);
      const unknown = await api.inject({ url: `/${version}/affiliates/history`, headers: { 'service-app-id': 'f'.repeat(64) } });
      assert.equal(unknown.statusCode, 401);
    }
  });
});
