import { readFileSync } from 'node:fs';

/** How to reach a Bitcoin Core (or Litecoin Core) node's JSON-RPC. */
export interface BitcoinRpcOptions {
  url: string;
  /** `user:password`, or read from the node's `.cookie` file (re-read after the node restarts). */
  auth?: { user: string; password: string } | { cookieFile: string };
  timeoutMs?: number;
}

/**
 * A client for a configured node: `url` may carry `user:password@` (fetch refuses URLs with
 * credentials, so they move to the Authorization header), or `cookieFile` names the node's `.cookie`.
 */
export function bitcoinRpcFor(access: { url: string; cookieFile?: string | undefined }): BitcoinRpc {
  const url = new URL(access.url);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const auth = access.cookieFile ? { cookieFile: access.cookieFile } : user ? { user, password } : undefined;
  return new BitcoinRpc({ url: url.toString(), ...(auth ? { auth } : {}) });
}

/** A JSON-RPC error the node answered with (`code` is Bitcoin Core's RPC error code). */
export class BitcoinRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`${method}: ${message} (${code})`);
    this.name = 'BitcoinRpcError';
  }
}

/** Bitcoin Core's RPC error codes the service reacts to. */
export const RPC_ERRORS = {
  /** RPC_VERIFY_REJECTED: the transaction was rejected by network rules. */
  verifyRejected: -26,
  /** RPC_VERIFY_ALREADY_IN_CHAIN. */
  alreadyInChain: -27,
  /** RPC_INVALID_ADDRESS_OR_KEY: also "no such transaction". */
  invalidAddressOrKey: -5,
  /** RPC_IN_WARMUP: the node is still starting. */
  inWarmup: -28,
} as const;

/** The fee rate to use when the node has too little history to estimate one (regtest, fresh nodes). */
export const FALLBACK_FEE_SAT_PER_VB = 2n;

/** An unmined transaction as getmempoolentry describes it; fees in satoshis. */
export interface MempoolEntry {
  /** The chain height when it entered the mempool. */
  height: number;
  vsize: number;
  fee: bigint;
  modifiedFee: bigint;
  /** Counting itself. */
  ancestorCount: number;
  ancestorVsize: number;
  /** Modified fees of itself and its unmined ancestors. */
  ancestorFee: bigint;
  /** Its unmined descendants, itself counted. */
  descendantCount: number;
}

interface RawMempoolEntry {
  height: number;
  vsize: number;
  ancestorcount: number;
  ancestorsize: number;
  descendantcount: number;
  fees: { base: number; modified: number; ancestor: number };
}

/** How often a call refused for a full RPC work queue is asked again (backing off from 10-20 ms, 5-10 s in all). */
const WORK_QUEUE_RETRIES = 9;
const WORK_QUEUE_FULL = /^Work queue depth exceeded/;
const NOT_REPEATABLE = new Set(['sendtoaddress', 'sendmany', 'generatetoaddress', 'generatetodescriptor', 'generateblock']);

/** A fetch whose connection the other side closed before any answer (undici's `other side closed`). */
function closedUnanswered(err: unknown): boolean {
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return err instanceof TypeError && err.message === 'fetch failed' && cause?.code === 'UND_ERR_SOCKET';
}

/** A small JSON-RPC client for Bitcoin Core's API (Litecoin Core speaks the same). */
export class BitcoinRpc {
  private id = 0;

  constructor(private readonly options: BitcoinRpcOptions) {}

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const request = () =>
      fetch(this.options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: this.authorization() },
        body: JSON.stringify({ jsonrpc: '1.0', id: ++this.id, method, params }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    let res = await request().catch(async (err: unknown) => {
      // The node closes a keep-alive connection it has left idle (`-rpcservertimeout`); a call sent on
      // it just then fails unanswered. Asked again on a new connection, except the calls that spend or
      // mine, whose first attempt might have run.
      if (!closedUnanswered(err) || NOT_REPEATABLE.has(method)) throw err;
      return request();
    });
    let text = await res.text();
    // A node whose RPC work queue is full (`-rpcworkqueue`, 16 by default) refuses the call before
    // running it (HTTP 503, or 500 on Litecoin Core), so asking again is safe; a burst of concurrent
    // steps meets this on a busy node.
    for (let attempt = 0; WORK_QUEUE_FULL.test(text) && attempt < WORK_QUEUE_RETRIES; attempt++) {
      // Jittered: the calls of one refused burst, asked again all at once, would find the queue full again.
      const backoff = 20 * 2 ** attempt;
      await new Promise((r) => setTimeout(r, backoff / 2 + Math.random() * (backoff / 2)));
      res = await request();
      text = await res.text();
    }
    if (res.status === 401) throw new BitcoinRpcError(method, 401, 'unauthorized: check the RPC credentials');
    let body: { result?: T; error?: { code: number; message: string } | null };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new BitcoinRpcError(method, res.status, `HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    if (body.error) throw new BitcoinRpcError(method, body.error.code, body.error.message);
    return body.result as T;
  }

  getBlockCount(): Promise<number> {
    return this.call('getblockcount');
  }

  getBlockHash(height: number): Promise<string> {
    return this.call('getblockhash', [height]);
  }

  /** Sends a raw transaction (hex); resolves to its txid. A transaction already known is not an error. */
  async sendRawTransaction(hex: string): Promise<string> {
    return this.call<string>('sendrawtransaction', [hex]);
  }

  /**
   * The node's view of an unmined transaction: when it entered the mempool, and its size and fees
   * with its unmined ancestors (modified fees: what the node's own block template weighs). Undefined
   * when the transaction is not in the mempool (mined, replaced, or never seen).
   */
  async mempoolEntry(txid: string): Promise<MempoolEntry | undefined> {
    let entry: RawMempoolEntry;
    try {
      entry = await this.call<RawMempoolEntry>('getmempoolentry', [txid]);
    } catch (err) {
      if (err instanceof BitcoinRpcError && err.code === RPC_ERRORS.invalidAddressOrKey) return undefined;
      throw err;
    }
    // Fees are JSON numbers of coins; a prioritised transaction's modified fee may be negative.
    const sats = (coins: number) => BigInt(Math.round(coins * 1e8));
    return {
      height: entry.height,
      vsize: entry.vsize,
      fee: sats(entry.fees.base),
      modifiedFee: sats(entry.fees.modified),
      ancestorCount: entry.ancestorcount,
      ancestorVsize: entry.ancestorsize,
      ancestorFee: sats(entry.fees.ancestor),
      descendantCount: entry.descendantcount,
    };
  }

  /**
   * The fee rate in sat/vB for confirmation within `blocks`, from the node's estimate; the fallback
   * when the node cannot estimate yet (regtest and fresh nodes answer with an error field).
   */
  async feeRate(blocks = 2): Promise<bigint> {
    const estimate = await this.call<{ feerate?: number; errors?: string[] }>('estimatesmartfee', [blocks]);
    if (estimate.feerate === undefined || estimate.feerate <= 0) return FALLBACK_FEE_SAT_PER_VB;
    // feerate is in coins per kvB, a JSON number with at most 8 decimals.
    const satPerKvB = BigInt(Math.round(estimate.feerate * 1e8));
    const rate = (satPerKvB + 999n) / 1000n;
    return rate > 0n ? rate : 1n;
  }

  private authorization(): string {
    const auth = this.options.auth;
    if (!auth) return '';
    const pair = 'cookieFile' in auth ? readFileSync(auth.cookieFile, 'utf8').trim() : `${auth.user}:${auth.password}`;
    return `Basic ${Buffer.from(pair).toString('base64')}`;
  }
}
