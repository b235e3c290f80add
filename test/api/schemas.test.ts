// GET /v2|v3/schemas: the contracts' ABIs by the asset list's schema names, usable as they are.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeFunctionData, encodeFunctionData, erc20Abi, type Abi } from 'viem';
import { htlcAbi } from '../../src/chains/solidity-htlc/htlc-abi.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';

type Json = Record<string, any>;

let t: TestApi;
const get = async (url: string, key: string | null = t.key) => {
  const res = await t.api.inject({ url, headers: key ? { 'service-app-id': key } : {} });
  return { status: res.statusCode, body: res.json<Json>() };
};
before(async () => {
  t = await openTestApi('pglite');
});
after(() => t.close());

test('the list holds the ABI of each contract schema served, under both versions', async () => {
  const v2 = await get('/v2/schemas');
  assert.equal(v2.status, 200);
  assert.deepEqual(
    v2.body.result.map((s: Json) => s.name),
    ['evm:htlc_erc20', 'evm:htlc', 'tron:htlc_trc20', 'evm:erc20', 'tron:trc20'],
  );
  assert.deepEqual((await get('/v3/schemas')).body, v2.body);
  const htlc = v2.body.result[0].schema as Json[];
  for (const name of ['initiate', 'initiateWithSignature', 'redeem', 'refund', 'instantRefund', 'orders', 'token']) {
    assert.ok(htlc.some((e) => e.type === 'function' && e.name === name), `evm:htlc_erc20 has ${name}`);
  }
  for (const name of ['Initiated', 'Redeemed', 'Refunded']) assert.ok(htlc.some((e) => e.type === 'event' && e.name === name), `evm:htlc_erc20 has ${name}`);
  const tron = v2.body.result[2].schema as Json[];
  assert.equal(tron.filter((e) => e.type === 'function' && e.name === 'initiate').length, 2, "tron:htlc_trc20 has both initiates (one with destination data)");
});

test('one schema encodes calls as the service does', async () => {
  const res = await get('/v2/schemas/evm:htlc_erc20');
  assert.equal(res.status, 200);
  assert.equal(res.body.result.name, 'evm:htlc_erc20');
  const served = res.body.result.schema as Abi;
  const args = [`0x${'11'.repeat(32)}`, `0x${'22'.repeat(32)}`] as const;
  const data = encodeFunctionData({ abi: served, functionName: 'redeem', args });
  assert.equal(data, encodeFunctionData({ abi: htlcAbi, functionName: 'redeem', args }));
  const erc20 = (await get('/v3/schemas/evm:erc20')).body.result.schema as Abi;
  const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [`0x${'33'.repeat(20)}`, 5n] });
  assert.deepEqual(decodeFunctionData({ abi: erc20, data: approve }).args, [`0x${'33'.repeat(20)}`, 5n]);
});

test('a schema without an ABI here is 404, an unknown name 400 naming it, no key 401', async () => {
  const solana = await get('/v2/schemas/solana:htlc');
  assert.equal(solana.status, 404);
  assert.equal(solana.body.code, 'not_found');
  assert.match(solana.body.error, /no schema for solana:htlc/);
  const unknown = await get('/v2/schemas/evm:nope');
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error, /'name'/);
  assert.equal((await get('/v3/schemas', null)).status, 401);
});
