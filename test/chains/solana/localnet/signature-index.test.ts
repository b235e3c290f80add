import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignatureIndex, type TransactionRecord } from '../../../../src/localnet/solana/chain/signature-index.ts';

function record(n: number, slot: number, accountKeys: string[]): TransactionRecord {
  return {
    signature: `sig${n}`,
    slot,
    blockTime: 0,
    wire: '',
    version: 0,
    accountKeys,
    loadedAddresses: { writable: [], readonly: [] },
    err: null,
    fee: 5000n,
    preBalances: [],
    postBalances: [],
    preTokenBalances: [],
    postTokenBalances: [],
    logMessages: [],
    innerInstructions: [],
    returnData: null,
    computeUnitsConsumed: 0n,
  };
}

describe('Solana localnet: the signature index', () => {
  it('lists an address newest first with before, until, limit and a slot ceiling', () => {
    const index = new SignatureIndex();
    for (let n = 0; n < 20; n++) index.add(record(n, Math.floor(n / 2), n % 2 === 0 ? ['program', 'even'] : ['program', 'odd', 'odd']));
    const sigs = (opts: Parameters<SignatureIndex['forAddress']>[1], key = 'program') => index.forAddress(key, opts).map((r) => r.signature);
    assert.deepEqual(sigs({ limit: 3, maxSlot: 100 }), ['sig19', 'sig18', 'sig17']);
    assert.deepEqual(sigs({ limit: 3, maxSlot: 100, before: 'sig17' }), ['sig16', 'sig15', 'sig14']);
    assert.deepEqual(sigs({ limit: 100, maxSlot: 100, before: 'sig5', until: 'sig1' }), ['sig4', 'sig3', 'sig2']);
    assert.deepEqual(sigs({ limit: 100, maxSlot: 100, before: 'sig5' }, 'odd'), ['sig3', 'sig1'], 'a key named twice is listed once');
    // `before` need not name a transaction of this address: it is a point in the chain.
    assert.deepEqual(sigs({ limit: 2, maxSlot: 100, before: 'sig9' }, 'even'), ['sig8', 'sig6']);
    assert.deepEqual(sigs({ limit: 100, maxSlot: 100, before: 'nope' }), []);
    assert.deepEqual(sigs({ limit: 2, maxSlot: 7 }), ['sig15', 'sig14']);
  });

  it('answers a page in time that does not grow with the rest of the chain', () => {
    const index = new SignatureIndex();
    // The best of five rounds of 200 pages: what a page costs, without a garbage collection that
    // happens to fall inside one round (the 199,000 records just added leave plenty to collect).
    const time = (f: () => void) => {
      let best = Infinity;
      for (let round = 0; round < 5; round++) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < 200; i++) f();
        best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6 / 200);
      }
      return best;
    };
    for (let n = 0; n < 1000; n++) index.add(record(n, n, n % 100 === 0 ? ['htlc', 'busy'] : ['busy']));
    const small = time(() => index.forAddress('htlc', { limit: 5, maxSlot: 1e9, before: 'sig900' }));
    for (let n = 1000; n < 200_000; n++) index.add(record(n, n, n % 100 === 0 ? ['htlc', 'busy'] : ['busy']));
    const large = time(() => index.forAddress('htlc', { limit: 5, maxSlot: 1e9, before: 'sig900' }));
    assert.deepEqual(index.forAddress('htlc', { limit: 5, maxSlot: 1e9, before: 'sig900' }).map((r) => r.signature), ['sig800', 'sig700', 'sig600', 'sig500', 'sig400']);
    assert.ok(large < small * 5 + 0.05, `a page took ${small} ms with 1,000 transactions and ${large} ms with 200,000`);
  });
});
