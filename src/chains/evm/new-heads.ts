import { createPublicClient, webSocket } from 'viem';

/**
 * Calls `onHead` with each new block number the node announces over WebSocket (`eth_subscribe`
 * newHeads), so a watcher reads a block as soon as it exists instead of at its next poll. The socket
 * reconnects on its own; the caller's polling stays the fallback. Returns the unsubscribe function.
 */
export function subscribeNewHeads(wsUrl: string, onHead: (blockNumber: bigint) => void, onError: (error: Error) => void): () => void {
  const client = createPublicClient({ transport: webSocket(wsUrl, { reconnect: { attempts: Number.MAX_SAFE_INTEGER, delay: 1_000 } }) });
  // Over a WebSocket transport viem subscribes to newHeads rather than polling.
  let subscribed = true;
  // Closing the socket below fails the subscription: that is no failure to report.
  const unwatch = client.watchBlockNumber({ emitMissed: false, onBlockNumber: onHead, onError: (err) => subscribed && onError(err) });
  const socket = client.transport.getRpcClient();
  subscribers.set(wsUrl, (subscribers.get(wsUrl) ?? 0) + 1);
  return () => {
    if (!subscribed) return;
    subscribed = false;
    unwatch();
    const left = subscribers.get(wsUrl)! - 1;
    if (left > 0) return void subscribers.set(wsUrl, left);
    subscribers.delete(wsUrl);
    void socket.then((rpc) => rpc.close()).catch(() => undefined);
  };
}

/**
 * Subscriptions per URL in this process: viem gives them one shared socket, closed with the last
 * (a service and a `hashlock solver` in one process, as `hashlock dev --external-solver` runs them).
 */
const subscribers = new Map<string, number>();
