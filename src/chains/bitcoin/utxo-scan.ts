import { satoshis } from './chain-data.ts';
import { BitcoinRpcError } from './rpc.ts';

/** What a UTXO-set scan needs of a node's JSON-RPC. */
interface RpcClient {
  call<T>(method: string, params?: unknown[]): Promise<T>;
}

/** A mined, unspent output of the node's UTXO set. */
export interface ScannedOutput {
  txid: string;
  vout: number;
  /** scriptPubKey, hex. */
  script: string;
  value: bigint;
  /** The block it was mined in. */
  height: bigint;
}

interface ScanResult {
  unspents: Array<{ txid: string; vout: number; scriptPubKey: string; amount: number; height: number }>;
}

/** The node runs one UTXO-set scan at a time, for every client: a scan asked meanwhile is refused. */
const SCAN_BUSY = /scan already in progress/i;

/**
 * The mined unspent outputs paying `addresses`, read from the node's UTXO set (`scantxoutset`), so
 * outputs paid before anyone watched the addresses count. A scan refused because another is running is
 * asked again, for at most `patienceMs`.
 */
export async function scanUtxoSet(rpc: RpcClient, addresses: readonly string[], patienceMs = 60_000): Promise<ScannedOutput[]> {
  if (addresses.length === 0) return [];
  const descriptors = addresses.map((a) => `addr(${a})`);
  for (const until = Date.now() + patienceMs; ; await new Promise((r) => setTimeout(r, 20 + Math.random() * 80))) {
    try {
      const { unspents } = await rpc.call<ScanResult>('scantxoutset', ['start', descriptors]);
      return unspents.map((u) => ({ txid: u.txid, vout: u.vout, script: u.scriptPubKey, value: satoshis(u.amount), height: BigInt(u.height) }));
    } catch (err) {
      if (!(err instanceof BitcoinRpcError && SCAN_BUSY.test(err.message)) || Date.now() > until) throw err;
    }
  }
}
