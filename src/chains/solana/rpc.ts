import { createDefaultRpcTransport, createSolanaRpcFromTransport } from '@solana/kit';

/** A connection the peer reset or closed as it was reused: nothing was asked, so asking again is safe. */
const STALE_SOCKET = /ECONNRESET|EPIPE|other side closed|UND_ERR_SOCKET/;

function staleSocket(err: unknown): boolean {
  if (!(err instanceof TypeError) || !/fetch failed/i.test(err.message)) return false;
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return STALE_SOCKET.test(`${cause?.code ?? ''} ${cause?.message ?? ''}`);
}

/** How long a call may wait for the node's answer before it counts as the node out of reach. */
export const SOLANA_RPC_TIMEOUT_MS = 30_000;

/**
 * A Solana RPC client (kit's) whose requests are asked again once when a kept-alive connection turns
 * out to be closed by the node: every JSON-RPC call the service makes is safe to repeat (a repeated
 * sendTransaction is the same signed bytes). A call unanswered after `timeoutMs` fails (a node that
 * hangs must not hold a worker's pass forever).
 */
export function solanaRpc(url: string, timeoutMs = SOLANA_RPC_TIMEOUT_MS) {
  const transport = createDefaultRpcTransport({ url });
  const timed: typeof transport = (request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    return transport({ ...request, signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout });
  };
  const retrying = (async (request) => {
    try {
      return await timed(request);
    } catch (err) {
      if (!staleSocket(err)) throw err;
      return timed(request);
    }
  }) as typeof transport;
  return createSolanaRpcFromTransport(retrying);
}

/**
 * Recent blockhashes for building transactions, fetched with @solana/kit and reused for a few
 * seconds: a blockhash stays valid for about a minute, and one per order would flood the RPC.
 */
export class RecentBlockhash {
  private readonly rpc;
  private cached: { blockhash: string; until: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    url: string,
    private readonly reuseMs = 10_000,
  ) {
    this.rpc = solanaRpc(url);
  }

  async get(): Promise<string> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.blockhash;
    this.pending ??= this.rpc
      .getLatestBlockhash({ commitment: 'confirmed' })
      .send()
      .then(({ value }) => {
        this.cached = { blockhash: value.blockhash, until: Date.now() + this.reuseMs };
        return value.blockhash;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }
}
