import { Clock, type LiteSVM } from 'litesvm';
import { epochPosition, type EpochScheduleValues } from './epoch-schedule.ts';

/** A blockhash is valid for this many slots after its own (the validator's MAX_PROCESSING_AGE). */
export const MAX_PROCESSING_AGE = 150;
/** A slot is finalized (rooted) this many slots after it, as on a cluster with full vote participation. */
export const FINALIZATION_DEPTH = 32;

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface SlotRecord {
  slot: number;
  blockhash: string;
  /** Unix seconds: the slot's Clock.unix_timestamp and the blockTime of its transactions. */
  unixTimestamp: number;
}

/**
 * The chain's slots: each tick is a new slot with a new blockhash, and the clock sysvar moves with
 * it. Without skipped slots the block height equals the slot. Keeps the blockhashes of the last 150
 * slots (those a transaction may still name), so a tick costs the same at any chain length: one
 * setClock, one expireBlockhash (a sha256), one map insert and one delete: about 10 µs measured
 * (test/chains/solana/localnet/slot-clock.test.ts prints it), the same at slot 2,500 and 25,000.
 */
export class SlotClock {
  private readonly recent: SlotRecord[] = [];
  private readonly slotByBlockhash = new Map<string, number>();
  readonly schedule: EpochScheduleValues;
  private epochStartTimestamp: bigint;

  constructor(
    private readonly svm: LiteSVM,
    history: readonly SlotRecord[],
  ) {
    const s = svm.getEpochSchedule();
    this.schedule = {
      slotsPerEpoch: Number(s.slotsPerEpoch),
      warmup: s.warmup,
      firstNormalEpoch: Number(s.firstNormalEpoch),
      firstNormalSlot: Number(s.firstNormalSlot),
      leaderScheduleSlotOffset: Number(s.leaderScheduleSlotOffset),
    };
    this.epochStartTimestamp = svm.getClock().epochStartTimestamp;
    for (const record of history.slice(-(MAX_PROCESSING_AGE + 1))) this.remember(record);
    if (this.recent.length === 0) {
      const clock = svm.getClock();
      this.remember({ slot: Number(clock.slot), blockhash: svm.latestBlockhash(), unixTimestamp: Number(clock.unixTimestamp) || nowSeconds() });
    }
  }

  /** The slot that transactions execute in now. */
  get slot(): number {
    return this.current.slot;
  }

  get current(): SlotRecord {
    return this.recent[this.recent.length - 1]!;
  }

  /**
   * Moves `count` slots on. Past the blockhash window it jumps: the skipped slots' blockhashes would
   * all have expired anyway, so only the last 151 slots are made one by one.
   */
  advance(count: number): void {
    const made = MAX_PROCESSING_AGE + 1;
    if (count > made) this.tick(count - made);
    for (let i = 0; i < Math.min(count, made); i++) this.tick();
  }

  /** Moves to the next slot (or `step` slots on): advances LiteSVM's clock and makes the slot's blockhash. */
  tick(step = 1): SlotRecord {
    const previous = this.current;
    const slot = previous.slot + step;
    const unixTimestamp = Math.max(previous.unixTimestamp, nowSeconds());
    const position = epochPosition(this.schedule, slot);
    if (position.epoch !== epochPosition(this.schedule, previous.slot).epoch) this.epochStartTimestamp = BigInt(unixTimestamp);
    this.svm.setClock(new Clock(BigInt(slot), this.epochStartTimestamp, BigInt(position.epoch), BigInt(position.epoch + 1), BigInt(unixTimestamp)));
    this.svm.expireBlockhash();
    const record = { slot, blockhash: this.svm.latestBlockhash(), unixTimestamp };
    if (step > 1) this.forget();
    this.remember(record);
    return record;
  }

  /** The newest slot that has reached `commitment`. */
  slotAt(commitment: Commitment): number {
    const slot = this.slot;
    if (commitment === 'processed') return slot;
    if (commitment === 'confirmed') return Math.max(0, slot - 1);
    return Math.max(0, slot - FINALIZATION_DEPTH);
  }

  /** The slot record of a recent slot (within the blockhash window), for getLatestBlockhash at a commitment. */
  recentSlot(slot: number): SlotRecord {
    const oldest = this.recent[0]!;
    return this.recent[Math.max(0, slot - oldest.slot)] ?? this.current;
  }

  /** Whether a transaction naming `blockhash` may execute now. */
  isBlockhashValid(blockhash: string): boolean {
    return this.slotByBlockhash.has(blockhash);
  }

  /** The last block height at which a blockhash made in `slot` is still valid. */
  lastValidBlockHeight(slot: number): number {
    return slot + MAX_PROCESSING_AGE;
  }

  /** The recent slots, oldest first, for persistence. */
  history(): readonly SlotRecord[] {
    return this.recent;
  }

  /** Drops every kept slot: after a jump the slots in between never had blockhashes. */
  private forget(): void {
    this.recent.length = 0;
    this.slotByBlockhash.clear();
  }

  private remember(record: SlotRecord): void {
    this.recent.push(record);
    this.slotByBlockhash.set(record.blockhash, record.slot);
    while (this.recent.length > MAX_PROCESSING_AGE + 1) {
      const expired = this.recent.shift()!;
      if (this.slotByBlockhash.get(expired.blockhash) === expired.slot) this.slotByBlockhash.delete(expired.blockhash);
    }
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
