import { epochPosition } from './epoch-schedule.ts';
import { BLOCK_NOT_AVAILABLE, invalidParams, RpcError } from './rpc-error.ts';
import { RUNTIME_VERSION, withContext, type RpcMethod, type RpcMethodContext } from './rpc-method.ts';
import { encodedBytes } from './rpc-params.ts';
import { parseWireMessage, WireFormatError, type ParsedMessage } from './wire-transaction.ts';

/** getVersion's feature-set: a fixed number here (LiteSVM enables every feature). */
const FEATURE_SET = 0;

/** The methods about the cluster, its slots, blockhashes and fees. */
export function clusterMethods(ctx: RpcMethodContext): Record<string, RpcMethod> {
  const { ledger, clock, index } = ctx;
  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': RUNTIME_VERSION, 'feature-set': FEATURE_SET }),
    getGenesisHash: () => ctx.genesisHash,
    getIdentity: () => ({ identity: '11111111111111111111111111111111' }),
    getFirstAvailableBlock: () => 0,
    getRecentPrioritizationFees: () => [],

    getSlot: (params) => {
      const config = params.config(0);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      return slot;
    },
    getBlockHeight: (params) => {
      const config = params.config(0);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      return slot;
    },
    getTransactionCount: (params) => {
      params.config(0).commitment();
      return index.size;
    },
    getEpochInfo: (params) => {
      const slot = clock.slotAt(params.config(0).commitment());
      const position = epochPosition(clock.schedule, slot);
      return { absoluteSlot: slot, blockHeight: slot, epoch: position.epoch, slotIndex: position.slotIndex, slotsInEpoch: position.slotsInEpoch, transactionCount: index.size };
    },
    getEpochSchedule: () => ({
      slotsPerEpoch: clock.schedule.slotsPerEpoch,
      leaderScheduleSlotOffset: clock.schedule.leaderScheduleSlotOffset,
      warmup: clock.schedule.warmup,
      firstNormalEpoch: clock.schedule.firstNormalEpoch,
      firstNormalSlot: clock.schedule.firstNormalSlot,
    }),

    getLatestBlockhash: (params) => {
      const config = params.config(0);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      const record = clock.recentSlot(slot);
      return withContext({ blockhash: record.blockhash, lastValidBlockHeight: clock.lastValidBlockHeight(record.slot) }, slot);
    },
    isBlockhashValid: (params) => {
      const blockhash = params.string(0, 'blockhash');
      const config = params.config(1);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      return withContext(clock.isBlockhashValid(blockhash), slot);
    },
    getFeeForMessage: (params) => {
      const bytes = encodedBytes(params.string(0, 'message'), 'base64', 'message');
      const config = params.config(1);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      let message: ParsedMessage;
      try {
        message = parseWireMessage(bytes);
      } catch (err) {
        if (err instanceof WireFormatError) throw invalidParams(`invalid message: ${err.message}`);
        throw err;
      }
      return withContext(ledger.feeForMessage(message), slot);
    },
    getMinimumBalanceForRentExemption: (params) => {
      const size = params.u64(0, 'data length');
      params.config(1).commitment();
      return ctx.svm.minimumBalanceForRentExemption(size);
    },

    getBlockTime: (params) => {
      const slot = Number(params.u64(0, 'slot'));
      const oldest = clock.history()[0]!.slot;
      if (slot < oldest || slot > clock.slot) throw new RpcError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      return clock.recentSlot(slot).unixTimestamp;
    },
  };
}
