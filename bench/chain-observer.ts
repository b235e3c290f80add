// What the service adds to a swap's time, seen from outside it: an observer hears each EVM chain's new
// heads and pending transactions over WebSocket, as the service's own watchers do, so for each swap
//  (a) = first sight of the source's confirming block -> destination initiate first seen pending (sent),
//  (b) = first sight of the secret's reveal block (destination redeem) -> source redeem first seen pending.
import { createPublicClient, parseEventLogs, webSocket, type Hex, type PublicClient } from 'viem';
import { HTLC_EVENTS } from '../src/chains/solidity-htlc/htlc-events.ts';

export interface ChainObserver {
  /** Wall-clock time (performance.now()) each block was first seen. */
  blocks: Map<bigint, number>;
  /** Wall-clock time each transaction was first seen pending (lower-case hash). */
  pending: Map<string, number>;
  stop(): void;
}

/**
 * Hears the chain's new heads and pending transactions over WebSocket: the time a block is first
 * announced is when the service's watchers, subscribed the same way, can first see it.
 */
export function observeChain(wsUrl: string): ChainObserver {
  const blocks = new Map<bigint, number>();
  const pending = new Map<string, number>();
  const ws = createPublicClient({ transport: webSocket(wsUrl) });
  const unwatchBlocks = ws.watchBlockNumber({
    emitMissed: true,
    onBlockNumber: (n) => {
      if (!blocks.has(n)) blocks.set(n, performance.now());
    },
  });
  const unwatchPending = ws.watchPendingTransactions({
    onTransactions: (hashes) => {
      const now = performance.now();
      for (const h of hashes) if (!pending.has(h.toLowerCase())) pending.set(h.toLowerCase(), now);
    },
  });
  return {
    blocks,
    pending,
    stop: () => {
      unwatchBlocks();
      unwatchPending();
      void ws.transport.getRpcClient().then((rpc) => rpc.close()).catch(() => undefined);
    },
  };
}

interface HtlcEvent {
  block: bigint;
  tx: string;
}

/** The Initiated and Redeemed events of `htlc` by order id, with their blocks and transactions. */
async function htlcEvents(client: PublicClient, htlc: Hex, fromBlock: bigint) {
  const logs = await client.getLogs({ address: htlc, fromBlock, toBlock: 'latest' });
  const events = parseEventLogs({ abi: HTLC_EVENTS, logs });
  const byOrder = new Map<string, { initiated?: HtlcEvent; redeemed?: HtlcEvent }>();
  for (const e of events) {
    const id = ((e.args as { orderID?: Hex }).orderID ?? '').toLowerCase();
    const entry = byOrder.get(id) ?? {};
    const at = { block: e.blockNumber, tx: e.transactionHash.toLowerCase() };
    if (e.eventName === 'Initiated') entry.initiated = at;
    if (e.eventName === 'Redeemed') entry.redeemed = at;
    byOrder.set(id, entry);
  }
  return byOrder;
}

/** One chain of a swap as the observer saw it: its client, observer, HTLC and the first block to scan. */
export interface ObservedSide {
  client: PublicClient;
  observer: ChainObserver;
  htlc: Hex;
  fromBlock: bigint;
}

/**
 * (a) and (b) of each swap in ms, and the source blocks from the client's initiate to the solver's
 * source redeem (the swap's last step there). Swap ids are the HTLCs' order ids (0x, lower case).
 */
export async function serviceLatencies(swaps: Array<{ source: string; destination: string }>, source: ObservedSide, destination: ObservedSide) {
  const sourceEvents = await htlcEvents(source.client, source.htlc, source.fromBlock);
  const destinationEvents = await htlcEvents(destination.client, destination.htlc, destination.fromBlock);
  const blockSeen = (side: ObservedSide, e: HtlcEvent | undefined) => {
    const t = e && side.observer.blocks.get(e.block);
    if (t === undefined) throw new Error(`block ${e?.block} was not observed`);
    return t;
  };
  // Sent = first seen pending; a transaction mined before the subscription heard it counts from its block.
  const sentSeen = (side: ObservedSide, e: HtlcEvent | undefined) => (e && side.observer.pending.get(e.tx)) ?? blockSeen(side, e);
  const a: number[] = [];
  const b: number[] = [];
  const sourceBlocks: number[] = [];
  for (const s of swaps) {
    const src = sourceEvents.get(s.source);
    const dst = destinationEvents.get(s.destination);
    a.push(sentSeen(destination, dst?.initiated) - blockSeen(source, src?.initiated));
    b.push(sentSeen(source, src?.redeemed) - blockSeen(destination, dst?.redeemed));
    if (src?.initiated && src.redeemed) sourceBlocks.push(Number(src.redeemed.block - src.initiated.block));
  }
  return { a, b, sourceBlocks };
}

/** One chain of a swap as read back from its HTLC's logs, without an observer. */
export type LoggedSide = Pick<ObservedSide, 'client' | 'htlc' | 'fromBlock'>;

/**
 * The block of each of a swap's four steps, counted from each chain's `fromBlock`: the client's
 * initiate, the solver's destination initiate, the destination redeem (the secret shown), the source
 * redeem. A burst that spills past the floor shows here at the step where its swaps start to spread.
 */
export async function stepBlocks(swaps: Array<{ source: string; destination: string }>, source: LoggedSide, destination: LoggedSide) {
  const [sourceEvents, destinationEvents] = await Promise.all([htlcEvents(source.client, source.htlc, source.fromBlock), htlcEvents(destination.client, destination.htlc, destination.fromBlock)]);
  const steps = { 'source initiated': [] as number[], 'destination initiated': [] as number[], 'destination redeemed': [] as number[], 'source redeemed': [] as number[] };
  const push = (list: number[], side: LoggedSide, e: HtlcEvent | undefined) => e && list.push(Number(e.block - side.fromBlock));
  for (const s of swaps) {
    const src = sourceEvents.get(s.source);
    const dst = destinationEvents.get(s.destination);
    push(steps['source initiated'], source, src?.initiated);
    push(steps['destination initiated'], destination, dst?.initiated);
    push(steps['destination redeemed'], destination, dst?.redeemed);
    push(steps['source redeemed'], source, src?.redeemed);
  }
  return steps;
}

/** An order's swap id as the HTLC logs it: 0x-prefixed, lower case. */
export const hex0x = (s: string): string => (s.startsWith('0x') ? s : `0x${s}`).toLowerCase();
