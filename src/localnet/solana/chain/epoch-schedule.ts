/** Solana's EpochSchedule arithmetic (epochs of 32, 64, ... slots during warmup, then slotsPerEpoch). */
const MINIMUM_SLOTS_PER_EPOCH = 32;

export interface EpochScheduleValues {
  slotsPerEpoch: number;
  warmup: boolean;
  firstNormalEpoch: number;
  firstNormalSlot: number;
  leaderScheduleSlotOffset: number;
}

export interface EpochPosition {
  epoch: number;
  slotIndex: number;
  slotsInEpoch: number;
}

export function epochPosition(schedule: EpochScheduleValues, slot: number): EpochPosition {
  if (schedule.warmup && slot < schedule.firstNormalSlot) {
    // Warmup epoch e spans slots [32 * (2^e - 1), 32 * (2^(e+1) - 1)).
    const epoch = Math.floor(Math.log2(slot + MINIMUM_SLOTS_PER_EPOCH)) - Math.log2(MINIMUM_SLOTS_PER_EPOCH);
    const slotsInEpoch = MINIMUM_SLOTS_PER_EPOCH * 2 ** epoch;
    return { epoch, slotIndex: slot - (slotsInEpoch - MINIMUM_SLOTS_PER_EPOCH), slotsInEpoch };
  }
  const normalSlot = slot - (schedule.warmup ? schedule.firstNormalSlot : 0);
  const firstEpoch = schedule.warmup ? schedule.firstNormalEpoch : 0;
  return {
    epoch: firstEpoch + Math.floor(normalSlot / schedule.slotsPerEpoch),
    slotIndex: normalSlot % schedule.slotsPerEpoch,
    slotsInEpoch: schedule.slotsPerEpoch,
  };
}
