// Garden's v3 flow as a v3 client meets it, against `hashlock serve` on the local chains (the service
// process of test/e2e/service-process.ts, on PostgreSQL): POST /v3/quote creates the order, the client
// sends the `initiate` exactly as given (an EVM approval then the initiate transaction; a Solana
// versioned transaction; a Litecoin payment to `to`), reports it with POST /v3/index, and polls
// GET /v3/orders/{id} until the order is completed. The Litecoin source needs litecoind, as the other
// family tests do.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { devAccount } from '../../src/localnet/accounts.ts';
import { familiesMissing } from '../e2e/service-chains.ts';
import { serviceForSuite, skipWithoutPostgres, type Chain } from '../e2e/service-process.ts';

type Json = Record<string, any>;

const noDatabase = skipWithoutPostgres('the v3 end-to-end swaps');
const missingFamilies = noDatabase ? undefined : await familiesMissing();
if (missingFamilies) console.warn(`\n*** SKIPPING the v3 SOL -> EVM and LTC -> EVM swaps: ${missingFamilies} ***\n`);
const suite = serviceForSuite({ litecoin: !missingFamilies, solana: !missingFamilies, database: 'hashlock_v3_flow' }, noDatabase);

const user = devAccount('user');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POST /v3/quote, waiting out the few seconds a fresh service has no liquidity read yet. */
async function createQuote(body: Json): Promise<Json> {
  let res = await suite.service!.request('POST', '/v3/quote', body);
  for (const end = Date.now() + 30_000; res.status === 400 && /insufficient liquidity/.test(res.body.error) && Date.now() < end; ) {
    await pause(500);
    res = await suite.service!.request('POST', '/v3/quote', body);
  }
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.quotes.length, 1);
  return res.body.result.quotes[0];
}

async function indexInitiate(id: string, txHash: string): Promise<void> {
  const res = await suite.service!.request('POST', '/v3/index', { id, tx_hash: txHash });
  assert.equal(res.status, 202, JSON.stringify(res.body));
}

/** GET /v3/orders/{id} until completed; fails on expired or refunded, or after `timeoutMs`. */
async function untilCompleted(id: string, timeoutMs: number): Promise<Json> {
  for (const end = Date.now() + timeoutMs; ; await pause(500)) {
    const order = (await suite.service!.call(`/v3/orders/${id}`)) as Json;
    if (order.status === 'completed') return order;
    assert.ok(!['expired', 'refunded'].includes(order.status), `${id}: ${order.status}`);
    assert.ok(Date.now() < end, `${id} not completed: ${JSON.stringify(order)}\n${suite.service!.output().slice(-10_000)}`);
  }
}

const quoteStatus = async (id: string) => ((await suite.service!.request('GET', `/v3/quote/${id}`)).body.result as Json).status;

const wbtcOf = (c: Chain, who: Address) =>
  c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });

describe('the v3 flow end to end', { skip: noDatabase }, () => {
  test('EVM WBTC -> EVM WBTC: the approval and the initiate sent as given, then indexed', async () => {
    const { eth, arb } = suite.world!;
    const q = await createQuote({
      source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: '100000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address },
      slippage: 50,
    });
    assert.equal(q.initiate.type, 'evm');
    assert.equal(await quoteStatus(q.id), 'open');
    const received = await wbtcOf(arb, user.address);

    const wallet = createWalletClient({ account: user, transport: http(eth.node.rpcUrl) });
    const send = async (tx: { to: Address; data: Hex; value: Hex; gas_limit: Hex; chain_id: number }) => {
      assert.equal(tx.chain_id, q.initiate.chain_id);
      const hash = await wallet.sendTransaction({ chain: undefined, to: tx.to, data: tx.data, value: BigInt(tx.value), gas: BigInt(tx.gas_limit) });
      assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
      return hash;
    };
    if (q.initiate.approval_transaction) await send(q.initiate.approval_transaction);
    const initiated = await send(q.initiate.initiate_transaction);
    await indexInitiate(q.id, initiated);

    const order = await untilCompleted(q.id, 120_000);
    assert.equal(order.source_swap.initiate_tx_hash, initiated);
    assert.notEqual(order.destination_swap.redeem_tx_hash, '');
    assert.equal(await wbtcOf(arb, user.address), received + BigInt(q.destination.amount), 'the user received the quoted amount');
    assert.equal(await quoteStatus(q.id), 'fulfilled');
  });

  test('SOL -> EVM WBTC: the versioned transaction signed and sent as given, then indexed', { skip: missingFamilies }, async () => {
    const { sol } = suite.world!;
    const q = await createQuote({
      source: { asset: 'solana_localnet:sol', owner: sol!.user.address, amount: '1000000000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address },
      slippage: 50,
    });
    assert.equal(q.initiate.type, 'solana');
    const signature = await sol!.send(q.initiate.versioned_tx);
    await indexInitiate(q.id, signature);
    const order = await untilCompleted(q.id, 180_000);
    assert.equal(order.source_swap.initiate_tx_hash, signature);
  });

  test('LTC -> EVM WBTC: the amount paid to the HTLC address, then indexed', { skip: missingFamilies }, async () => {
    const { ltc } = suite.world!;
    const q = await createQuote({
      source: { asset: 'litecoin_localnet:ltc', owner: ltc!.user, amount: '100000000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address },
      slippage: 50,
    });
    assert.equal(q.initiate.type, 'bitcoin');
    assert.equal(q.initiate.amount, '100000000');
    const txid = await ltc!.pay(q.initiate.to, BigInt(q.initiate.amount));
    await indexInitiate(q.id, txid);
    const order = await untilCompleted(q.id, 240_000);
    assert.ok(order.source_swap.initiate_tx_hash.split(',').includes(txid));
  });
});
