// Swaps carried out through the Aggregator API alone (the client of aggregator-client.ts, written from
// Garden's openapi-v3.yaml) against `hashlock serve` on the local chains and PostgreSQL: the quote's steps
// taken as given, the funding reported with submit, the order followed by long-poll until `completed`
// with `received` filled. The Litecoin deposit needs litecoind, as the other family tests do.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { devAccount } from '../../src/localnet/accounts.ts';
import { familiesMissing } from '../e2e/service-chains.ts';
import { serviceForSuite, skipWithoutPostgres, type Chain } from '../e2e/service-process.ts';
import { signGaslessInitiate, type InitiateTypedData } from '../helpers/gasless.ts';
import { AggregatorClient, type Quote, type QuoteRequest } from './aggregator-client.ts';

const noDatabase = skipWithoutPostgres('the Aggregator API swaps');
const missingFamilies = noDatabase ? undefined : await familiesMissing();
if (missingFamilies) console.warn(`\n*** SKIPPING the Aggregator LTC -> EVM swap: ${missingFamilies} ***\n`);
const suite = serviceForSuite({ litecoin: !missingFamilies, database: 'hashlock_aggregator_swaps' }, noDatabase);

const user = devAccount('user');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const client = () => new AggregatorClient(suite.service!.api, suite.service!.key);

/** POST /v3/quote, waiting out the seconds a fresh service has no liquidity read yet (a provider error meanwhile). */
async function quote(request: QuoteRequest): Promise<Quote> {
  const key = randomUUID();
  for (const end = Date.now() + 30_000; ; await pause(500)) {
    const { body } = await client().quote(request, key);
    if (body.quotes.length === 1) return body.quotes[0]!;
    assert.ok(Date.now() < end && body.provider_errors[0]?.code === 'insufficient_liquidity', JSON.stringify(body));
  }
}

const wbtcOf = (c: Chain, who: Address) =>
  c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });

describe('swaps through the Aggregator API', { skip: noDatabase }, () => {
  test('EVM WBTC -> EVM WBTC: the steps taken as given, submit, long-poll until completed', async () => {
    const { eth, arb } = suite.world!;
    const q = await quote({
      sell_asset: 'ethereum_localnet:wbtc',
      buy_asset: 'arbitrum_localnet:wbtc',
      amount: '100000',
      trade_type: 'exact_in',
      sell_address: user.address,
      buy_address: user.address,
    });
    const before = await wbtcOf(arb, user.address);
    const wallet = createWalletClient({ account: user, transport: http(eth.node.rpcUrl) });
    let funded = false;
    for (const step of q.steps) {
      assert.equal(step.data?.chain, 'ethereum_localnet');
      if (step.kind === 'transaction') {
        const tx = step.data as unknown as { to: Address; data: Hex; value: Hex; gas_limit: Hex };
        const hash = await wallet.sendTransaction({ chain: undefined, to: tx.to, data: tx.data, value: BigInt(tx.value), gas: BigInt(tx.gas_limit) });
        assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
        if (step.id === 'initiate') {
          await client().submit(q.id, hash);
          funded = true;
        }
      } else {
        // The service's app is gasless: the initiate is the user's signature, which the service relays.
        assert.equal(step.kind, 'signature');
        const signature = await signGaslessInitiate(user, (step.data as unknown as { typed_data: InitiateTypedData }).typed_data);
        const order = await client().submitSignature(q.id, signature);
        assert.deepEqual(order.steps, [], 'nothing left for the user once the service has the signature');
        funded = true;
      }
    }
    assert.ok(funded);
    const order = await client().follow(q.id, () => false, 120_000);
    assert.equal(order.state, 'completed', JSON.stringify(order));
    assert.equal(order.received!.amount, q.buy_amount);
    assert.match(order.received!.tx, /^0x[0-9a-f]{64}$/);
    assert.equal(order.deposits.length, 1);
    assert.equal(await wbtcOf(arb, user.address), before + BigInt(q.buy_amount), 'the user received buy_amount');
    const listed = await client().orders({ tx_hash: order.deposits[0]!.tx_hash });
    assert.deepEqual(listed.body.orders.map((o) => o.id), [q.id]);
  });

  test('LTC -> EVM WBTC: the deposit sent to its address, submitted, followed to completed', { skip: missingFamilies }, async () => {
    const { ltc, arb } = suite.world!;
    const q = await quote({
      sell_asset: 'litecoin_localnet:ltc',
      buy_asset: 'arbitrum_localnet:wbtc',
      amount: '100000000',
      trade_type: 'exact_in',
      sell_address: ltc!.user,
      buy_address: user.address,
    });
    assert.equal(q.steps.length, 1);
    const [step] = q.steps;
    assert.equal(step!.kind, 'deposit');
    const before = await wbtcOf(arb, user.address);
    const txid = await ltc!.pay(step!.deposit!.address, BigInt(step!.deposit!.amount));
    const submitted = await client().submit(q.id, txid);
    assert.deepEqual(submitted.deposits.map((d) => d.tx_hash), [txid]);
    const order = await client().follow(q.id, () => false, 240_000);
    assert.equal(order.state, 'completed', JSON.stringify(order));
    assert.equal(order.received!.amount, q.buy_amount);
    assert.equal(await wbtcOf(arb, user.address), before + BigInt(q.buy_amount));
  });
});
