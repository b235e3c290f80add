import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSigner, lamports } from '@solana/kit';
import { portIsFree } from '../../../../src/localnet/free-port.ts';
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from '../../../../src/localnet/solana/chain/json.ts';
import { rawRpc, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';

describe('Solana localnet: the JSON-RPC protocol', () => {
  let h: LocalnetHarness;
  let url: string;
  before(async () => {
    h = await startTestLocalnet({ slotMs: 0 });
    url = h.chain.rpcUrl;
  });
  after(() => h.stop());

  const call = (method: string, params?: unknown) => rawRpc(url, { jsonrpc: '2.0', id: 7, method, ...(params === undefined ? {} : { params }) });

  it('listens on 127.0.0.1 and answers the cluster-information methods', async () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(await h.rpc.getHealth().send(), 'ok');
    assert.equal(await (await fetch(`${url}/health`)).text(), 'ok');
    const version = await h.rpc.getVersion().send();
    assert.equal(version['solana-core'], '4.3.0');
    const genesis = await h.rpc.getGenesisHash().send();
    assert.match(genesis, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const epoch = await h.rpc.getEpochInfo({ commitment: 'processed' }).send();
    assert.equal(epoch.absoluteSlot, BigInt(h.chain.slot()));
    assert.equal(epoch.blockHeight, epoch.absoluteSlot);
    assert.ok(epoch.slotIndex < epoch.slotsInEpoch);
    assert.equal(await h.rpc.getSlot({ commitment: 'processed' }).send(), BigInt(h.chain.slot()));
    assert.equal(await h.rpc.getBlockHeight({ commitment: 'confirmed' }).send(), BigInt(h.chain.slot() - 1));
    assert.equal(await h.rpc.getMinimumBalanceForRentExemption(0n).send(), 890_880n);
  });

  it('gives the blockhash of the slot at each commitment', async () => {
    h.chain.advanceSlots(40);
    const processed = (await h.rpc.getLatestBlockhash({ commitment: 'processed' }).send()).value;
    const finalized = (await h.rpc.getLatestBlockhash({ commitment: 'finalized' }).send()).value;
    assert.notEqual(processed.blockhash, finalized.blockhash);
    assert.equal(processed.lastValidBlockHeight - finalized.lastValidBlockHeight, 32n);
    assert.equal((await h.rpc.isBlockhashValid(finalized.blockhash, { commitment: 'processed' }).send()).value, true);
  });

  it('answers -32601 to an unknown method and -32602 to bad params, and keeps serving', async () => {
    assert.deepEqual(await call('getBlockProduction2'), { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 7 });
    for (const [method, params] of [
      ['getBalance', []],
      ['getBalance', ['not-a-key']],
      ['getBalance', 'not-an-array'],
      ['getAccountInfo', [42]],
      ['getSignatureStatuses', [['abc']]],
      ['getSignaturesForAddress', ['11111111111111111111111111111111', { limit: -1 }]],
      ['getSlot', [{ commitment: 'soon' }]],
      ['sendTransaction', ['%%%']],
      ['sendTransaction', ['AAAA', { encoding: 'base64' }]],
      ['getProgramAccounts', ['11111111111111111111111111111111', { filters: [{ nonsense: 1 }] }]],
      ['getTransaction', ['1111111111111111111111111111111111111111111111111111111111111111', { commitment: 'processed' }]],
      ['requestAirdrop', ['11111111111111111111111111111111', -5]],
      ['getMinimumBalanceForRentExemption', ['x']],
    ] as const) {
      const answer = await call(method, params);
      assert.equal(answer.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${JSON.stringify(answer)}`);
      assert.equal(answer.id, 7);
    }
    const notJson = await rawRpc(url, '{"jsonrpc":"2.0",');
    assert.equal(notJson.error.code, -32700);
    const notRequest = await rawRpc(url, { id: 1 });
    assert.equal(notRequest.error.code, -32600);
    assert.equal(await h.rpc.getHealth().send(), 'ok');
  });

  it('answers batches in order', async () => {
    const who = await generateKeyPairSigner();
    await h.rpc.requestAirdrop(who.address, lamports(2_000_000_000n)).send();
    const answers = await rawRpc(url, [
      { jsonrpc: '2.0', id: 1, method: 'getBalance', params: [who.address, { commitment: 'processed' }] },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
    ]);
    assert.equal(answers[0].id, 1);
    assert.equal(answers[0].result.value, 2_000_000_000);
    assert.equal(answers[1].error.code, -32601);
  });

  it('reads and writes u64 values beyond 2^53 as JSON numbers', async () => {
    const parsed = parseJsonWithBigInts('{"a":18446744073709551615,"b":"18446744073709551615","c":[1.5,-2,9007199254740993]}') as any;
    assert.equal(parsed.a, 18446744073709551615n);
    assert.equal(parsed.b, '18446744073709551615');
    assert.deepEqual(parsed.c, [1.5, -2, 9007199254740993n]);
    assert.equal(stringifyJsonWithBigInts({ v: 18446744073709551615n, s: 'x' }), '{"v":18446744073709551615,"s":"x"}');
    const who = await generateKeyPairSigner();
    // Kit refuses to send such a number, so this request is written by hand.
    const big = 10_000_000n * 1_000_000_000n;
    const airdrop = await rawRpc(url, `{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["${who.address}",${big}]}`);
    assert.equal(typeof airdrop.result, 'string', JSON.stringify(airdrop));
    assert.equal((await h.rpc.getBalance(who.address, { commitment: 'processed' }).send()).value, big);
    const info = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [who.address, { encoding: 'base64' }] }) });
    const text = await info.text();
    assert.match(text, /"lamports":10000000000000000,/);
    assert.match(text, /"rentEpoch":18446744073709551615,/);
  });

  it('frees its port and stops answering when stopped', async () => {
    const other = await startTestLocalnet({ slotMs: 5 });
    const port = other.chain.port;
    assert.equal(await portIsFree(port), false);
    const started = Date.now();
    await other.stop();
    assert.ok(Date.now() - started < 1000, 'stop is fast');
    assert.equal(await portIsFree(port), true);
  });

  it('a held clock moves only with advanceSlots, and ticks again once released', async () => {
    const other = await startTestLocalnet({ slotMs: 5 });
    try {
      const release = other.chain.hold();
      const held = other.chain.slot();
      await new Promise((r) => setTimeout(r, 100)); // twenty slots' time
      assert.equal(other.chain.slot(), held, 'no slot passed while held');
      other.chain.advanceSlots(7);
      assert.equal(other.chain.slot(), held + 7);
      release();
      release(); // a second call releases nothing more
      for (const end = Date.now() + 5_000; other.chain.slot() === held + 7; await new Promise((r) => setTimeout(r, 5))) {
        assert.ok(Date.now() < end, 'the clock ticks again once released');
      }
    } finally {
      await other.stop();
    }
  });
});
