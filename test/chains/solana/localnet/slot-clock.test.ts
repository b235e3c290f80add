import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LiteSVM } from 'litesvm';
import { address, generateKeyPairSigner, lamports } from '@solana/kit';
import { ChainDirectory } from '../../../../src/localnet/solana/chain/persistence.ts';
import { MAX_PROCESSING_AGE, SlotClock } from '../../../../src/localnet/solana/chain/slot-clock.ts';
import { epochPosition } from '../../../../src/localnet/solana/chain/epoch-schedule.ts';

function averageTickMicros(clock: SlotClock, ticks: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < ticks; i++) clock.tick();
  return Number(process.hrtime.bigint() - started) / 1000 / ticks;
}

describe('Solana localnet: the slot clock', () => {
  it('keeps exactly the last 150 slots of blockhashes valid and moves the Clock sysvar', () => {
    const svm = new LiteSVM().withBlockhashCheck(false);
    const clock = new SlotClock(svm, []);
    const first = clock.tick();
    assert.equal(Number(svm.getClock().slot), first.slot);
    assert.equal(svm.latestBlockhash(), first.blockhash);
    assert.equal(Number(svm.getClock().unixTimestamp), first.unixTimestamp);
    for (let i = 0; i < MAX_PROCESSING_AGE; i++) clock.tick();
    assert.equal(clock.isBlockhashValid(first.blockhash), true);
    assert.equal(clock.lastValidBlockHeight(first.slot), clock.slot);
    clock.tick();
    assert.equal(clock.isBlockhashValid(first.blockhash), false);
    assert.equal(clock.slotAt('confirmed'), clock.slot - 1);
    assert.equal(clock.slotAt('finalized'), clock.slot - 32);
  });

  it('jumps over a long gap, keeping only the window of blockhashes', () => {
    const svm = new LiteSVM().withBlockhashCheck(false);
    const clock = new SlotClock(svm, []);
    const before = clock.tick();
    clock.advance(10_000);
    assert.equal(clock.slot, before.slot + 10_000);
    assert.equal(Number(svm.getClock().slot), clock.slot);
    assert.equal(clock.isBlockhashValid(before.blockhash), false);
    assert.equal(clock.history().length, MAX_PROCESSING_AGE + 1);
    assert.deepEqual(clock.history().map((r) => r.slot), Array.from({ length: MAX_PROCESSING_AGE + 1 }, (_, i) => clock.slot - MAX_PROCESSING_AGE + i));
    assert.equal(clock.recentSlot(clock.slotAt('finalized')).slot, clock.slot - 32);
  });

  it('ticks in constant time, however long the chain (cost measured here)', (t) => {
    const svm = new LiteSVM().withBlockhashCheck(false);
    const clock = new SlotClock(svm, []);
    averageTickMicros(clock, 500); // warm-up
    const early = averageTickMicros(clock, 2000);
    averageTickMicros(clock, 20_000);
    const late = averageTickMicros(clock, 2000);
    t.diagnostic(`slot tick: ${early.toFixed(1)} µs at slot ~2,500, ${late.toFixed(1)} µs at slot ~24,500`);
    assert.ok(late < early * 3 + 20, `a tick got dearer as the chain grew: ${early} -> ${late} µs`);
    assert.ok(late < 1000, `a tick costs ${late} µs`);
  });

  it('epoch arithmetic follows the warmup schedule (32, 64, ... slots)', () => {
    const schedule = { slotsPerEpoch: 432_000, warmup: true, firstNormalEpoch: 14, firstNormalSlot: 524_256, leaderScheduleSlotOffset: 432_000 };
    assert.deepEqual(epochPosition(schedule, 0), { epoch: 0, slotIndex: 0, slotsInEpoch: 32 });
    assert.deepEqual(epochPosition(schedule, 95), { epoch: 1, slotIndex: 63, slotsInEpoch: 64 });
    assert.deepEqual(epochPosition(schedule, 96), { epoch: 2, slotIndex: 0, slotsInEpoch: 128 });
    assert.deepEqual(epochPosition(schedule, 524_256 + 432_001), { epoch: 15, slotIndex: 1, slotsInEpoch: 432_000 });
  });

  it('saves a chain of a few hundred accounts in milliseconds (cost measured here)', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'hashlock-solana-save-'));
    try {
      const svm = new LiteSVM();
      const system = address('11111111111111111111111111111111');
      for (let i = 0; i < 400; i++) {
        const { address: key } = await generateKeyPairSigner();
        svm.setAccount({ address: key, lamports: lamports(1_000_000_000n), programAddress: system, executable: false, data: new Uint8Array(i % 2 ? 165 : 0), space: 0n });
      }
      const directory = new ChainDirectory(dir);
      directory.load();
      const clock = new SlotClock(svm, []);
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        clock.tick();
        const started = process.hrtime.bigint();
        directory.save(svm, { genesisHash: '11111111111111111111111111111111', slots: clock.history(), newTransactions: [] });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      const median = times.sort((a, b) => a - b)[5]!;
      const size = statSync(join(dir, 'state-10.bin')).size;
      t.diagnostic(`save with 400 accounts: median ${median.toFixed(2)} ms, snapshot ${(size / 1e6).toFixed(2)} MB`);
      assert.ok(median < 250, `a save took ${median} ms`);
      const loaded = new ChainDirectory(dir).load();
      assert.equal(loaded?.slots[loaded.slots.length - 1]?.slot, clock.slot);
      assert.equal(loaded?.svm.getBalance(svm.getProgramAccounts(system).find((a) => a.data.length === 165)!.address), 1_000_000_000n);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
