import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { address, generateKeyPairSigner, type KeyPairSigner, type Signature } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { fundedSigner, rawRpc, sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';

describe('Solana localnet: getSignaturesForAddress', () => {
  let h: LocalnetHarness;
  let payer: KeyPairSigner;
  let watched: KeyPairSigner;
  /** The transfers to `watched`, oldest first: two per slot over five slots. */
  const sent: { signature: Signature; slot: number }[] = [];

  before(async () => {
    h = await startTestLocalnet({ slotMs: 0 });
    payer = await fundedSigner(h.rpc, 100n);
    watched = await generateKeyPairSigner();
    const bystander = await generateKeyPairSigner();
    for (let slot = 0; slot < 5; slot++) {
      for (let n = 0; n < 2; n++) {
        const tx = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: watched.address, amount: BigInt(1_000_000_000 + sent.length) })]);
        sent.push({ signature: await sendWire(h.rpc, tx.wire), slot: h.chain.slot() });
        // Activity elsewhere must not show up in the watched address's list.
        const other = await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: bystander.address, amount: BigInt(1_000_000_000 + sent.length) })]);
        await sendWire(h.rpc, other.wire);
      }
      h.chain.advanceSlots(1);
    }
  });
  after(() => h.stop());

  const list = (config: Record<string, unknown>) => h.rpc.getSignaturesForAddress(watched.address, { commitment: 'confirmed', ...config }).send();
  const newestFirst = () => sent.map((s) => s.signature).reverse();

  it('lists newest first with slot, err, blockTime and confirmationStatus', async () => {
    const all = await list({});
    assert.deepEqual(all.map((s) => s.signature), newestFirst());
    assert.deepEqual(all.map((s) => Number(s.slot)), sent.map((s) => s.slot).reverse());
    for (const entry of all) {
      assert.equal(entry.err, null);
      assert.equal(entry.memo, null);
      assert.equal(entry.confirmationStatus, 'confirmed');
      assert.ok(Number(entry.blockTime) > 1_600_000_000);
    }
  });

  it('pages with limit and before, and stops at until', async () => {
    const expected = newestFirst();
    const pages: string[] = [];
    let before: Signature | undefined;
    for (;;) {
      const page = await list({ limit: 3, ...(before ? { before } : {}) });
      if (page.length === 0) break;
      assert.ok(page.length <= 3);
      pages.push(...page.map((s) => s.signature));
      before = page[page.length - 1]!.signature;
    }
    assert.deepEqual(pages, expected);
    const untilFourth = await list({ until: expected[3] });
    assert.deepEqual(untilFourth.map((s) => s.signature), expected.slice(0, 3));
    const window = await list({ before: expected[1], until: expected[6] });
    assert.deepEqual(window.map((s) => s.signature), expected.slice(2, 6));
    const unknownBefore = await list({ before: (await signedTransaction(h.rpc, payer, [getTransferSolInstruction({ source: payer, destination: watched.address, amount: 1n })])).signature });
    assert.deepEqual(unknownBefore, []);
  });

  it('honours commitment: finalized hides the last 32 slots, processed is refused', async () => {
    assert.deepEqual(await list({ commitment: 'finalized' }), []);
    h.chain.advanceSlots(28);
    // The oldest transfers' slot is now 32 slots back: finalized.
    const finalized = await list({ commitment: 'finalized' });
    assert.deepEqual(finalized.map((s) => s.signature), sent.filter((s) => s.slot <= h.chain.slot() - 32).map((s) => s.signature).reverse());
    assert.ok(finalized.length > 0 && finalized.length < sent.length, `${finalized.length} finalized`);
    assert.ok(finalized.every((s) => s.confirmationStatus === 'finalized'));
    const refused = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getSignaturesForAddress', params: [watched.address, { commitment: 'processed' }] });
    assert.equal(refused.error.code, -32602);
    const badLimit = await rawRpc(h.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'getSignaturesForAddress', params: [watched.address, { limit: 1001 }] });
    assert.equal(badLimit.error.code, -32602);
  });

  it('indexes a program id: the System program lists every transfer, newest first', async () => {
    const system = await h.rpc.getSignaturesForAddress(address('11111111111111111111111111111111'), { commitment: 'confirmed', limit: 4 }).send();
    assert.equal(system.length, 4);
    assert.equal(system[1]!.signature, sent[sent.length - 1]!.signature);
  });
});
