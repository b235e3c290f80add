import type { Bump, HeldItem } from '../../engine/driver.ts';
import { bumpsOf, enqueueBitcoinTx, outpointKey, reservedOutpoints, withWalletLock, type BitcoinPayload } from './store/jobs.ts';
import { utxosOf } from './store/utxos.ts';
import type { Db } from '../../store/database.ts';
import { buildCpfpTx } from './cpfp.ts';
import { relaysReplacements } from './rbf.ts';
import type { BitcoinRpc, MempoolEntry } from './rpc.ts';
import { walletAddress } from './wallet-tx.ts';

export interface FeeBumpOptions {
  db: Db;
  /** The chain's key. */
  chain: string;
  network: string;
  rpc: BitcoinRpc;
  /** The solver's wallet key: bumps spend outputs paying its key-path P2TR address, back to it. */
  walletKey: Uint8Array;
  /** A transaction this many blocks in the mempool is stuck (default 2). */
  afterBlocks?: number;
  /** At most this many bumps per job (default 3). */
  maxRounds?: number;
  /** The package fee rate is never raised above this, in sat/vB (default 200). */
  maxFeeRate?: bigint;
  /** Whether the node relays BIP125 replacements (default: what the network's node software does). */
  replaceByFee?: boolean;
}

/** Litecoin Core's default limit of unmined ancestors (itself included) of a mempool transaction: a child past it is refused. */
const ANCESTOR_LIMIT = 25;

/**
 * How the Bitcoin-family driver bumps a stuck job, when the engine asks (`TxDriver.bump`). A job is
 * stuck when its transaction (or, after a bump, its last child) has been in the node's mempool
 * `afterBlocks` blocks, or its package pays less than the node's estimate. A job written with
 * replacements (a redeem or refund paying a client, which has no output to the wallet) gets the next
 * one, which the engine stores and sends in its place, where the node relays replacements. Otherwise
 * the bump is a CPFP child: it spends an unreserved output of that transaction paying the wallet back
 * to the wallet, with a fee lifting the whole unmined package to the target rate. The child is a job
 * of its own (key `<job>:cpfp:<round>`, written under the wallet lock, its input reserved like any
 * job's), so a crash or a second worker never makes two of a round; the engine sends and settles it
 * like any other job, its parent first should the node lack it.
 */
export class BitcoinFeeBumper {
  private readonly wallet: string;
  private readonly afterBlocks: number;
  private readonly maxRounds: number;
  private readonly maxFeeRate: bigint;
  private readonly replaceByFee: boolean;
  /** The chain tip and fee estimate of the engine's current pass. */
  private reads: Promise<[number, bigint]> | undefined;

  constructor(private readonly options: FeeBumpOptions) {
    this.wallet = walletAddress(options.walletKey, options.network);
    this.afterBlocks = options.afterBlocks ?? 2;
    this.maxRounds = options.maxRounds ?? 3;
    this.maxFeeRate = options.maxFeeRate ?? 200n;
    this.replaceByFee = options.replaceByFee ?? relaysReplacements(options.network);
  }

  /** The bump of a job whose transaction is not mined; undefined while it is not stuck. */
  async bump({ job, payload, signed }: HeldItem<BitcoinPayload>): Promise<Bump | undefined> {
    // A CPFP child is bumped by its parent's next round: the last child carries the package.
    if (payload.bumps) return undefined;
    if (payload.replacements?.length && this.replaceByFee) return this.replace(payload, signed.hash);
    const { db, chain, network, walletKey } = this.options;
    const rounds = await bumpsOf(db, chain, [job.idempotencyKey]);
    // The last child the node may still mine carries the package; a refused one bumps nothing.
    const txid = rounds.filter((r) => r.status !== 'failed').at(-1)?.txid ?? signed.hash;
    const entry = await this.options.rpc.mempoolEntry(txid);
    const target = entry && (await this.targetRate(entry));
    if (!entry || target === undefined) return undefined;
    if (rounds.length >= this.maxRounds) return { none: `its ${rounds.length} CPFP rounds are used up` };
    if (entry.ancestorCount >= ANCESTOR_LIMIT) return { none: `${entry.ancestorCount} unmined ancestors: a child would pass the node's limit` };
    const key = `${job.idempotencyKey}:cpfp:${rounds.length + 1}`;
    const child = await withWalletLock(db, chain, async (trx) => {
      const reserved = await reservedOutpoints(trx, chain);
      const coins = await utxosOf(trx, chain, this.wallet, { unspent: true });
      const output = coins.find((c) => c.txid === txid && !reserved.has(outpointKey(c)));
      if (!output) return undefined;
      const utxo = { txid: output.txid, vout: output.vout, value: output.value };
      const tx = buildCpfpTx({ privateKey: walletKey, network, utxo, ancestorVsize: entry.ancestorVsize, ancestorFee: entry.ancestorFee, feeRate: target, to: this.wallet });
      if (!tx) return undefined;
      const written = await enqueueBitcoinTx(trx, { chain, orderId: job.orderId ?? undefined, action: 'cpfp', idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs: [utxo], bumps: job.idempotencyKey });
      return written.created ? tx : undefined;
    });
    if (!child) return { none: 'no output of it to the wallet that can pay a child' };
    // Written only: its job wakes the engine (`job_queued`), whose next pass sends it.
    return { child: child.txid };
  }

  /** The next replacement signed up front: the first paying the target rate, else the highest. */
  private async replace(payload: BitcoinPayload, current: string): Promise<Bump | undefined> {
    const entry = await this.options.rpc.mempoolEntry(current);
    const target = entry && (await this.targetRate(entry));
    if (target === undefined) return undefined;
    const versions = payload.replacements ?? [];
    const at = versions.findIndex((v) => v.txid === current);
    if (at === -1 && current !== payload.txid) return undefined;
    const later = versions.slice(at + 1).filter((v) => BigInt(v.feeRate) <= this.maxFeeRate);
    const next = later.find((v) => BigInt(v.feeRate) >= target) ?? later.at(-1);
    return next ? { replacement: { raw: next.hex, hash: next.txid } } : { none: 'no replacement left under the fee ceiling' };
  }

  /**
   * The package rate to bump to, or undefined when the transaction is not stuck or a bump would not
   * raise what its package pays: the node's estimate, and after `afterBlocks` blocks at least a
   * quarter (1 sat/vB or more) above the package's current rate, capped at `maxFeeRate`.
   */
  private async targetRate(entry: MempoolEntry): Promise<bigint | undefined> {
    const [tip, estimate] = await this.tipAndEstimate();
    const vsize = BigInt(entry.ancestorVsize);
    const current = entry.ancestorFee > 0n ? entry.ancestorFee / vsize : 0n;
    const waited = tip - entry.height >= this.afterBlocks;
    const underpaid = entry.ancestorFee < estimate * vsize;
    if (!waited && !underpaid) return undefined;
    const step = current / 4n > 1n ? current / 4n : 1n;
    let target = waited && current + step > estimate ? current + step : estimate;
    if (target > this.maxFeeRate) target = this.maxFeeRate;
    return entry.ancestorFee < target * vsize ? target : undefined;
  }

  /** A new pass of the engine: the tip and estimate are read again, once, for its jobs. */
  startPass(): void {
    this.reads = undefined;
  }

  private tipAndEstimate(): Promise<[number, bigint]> {
    if (!this.reads) {
      const { rpc } = this.options;
      this.reads = Promise.all([rpc.getBlockCount(), rpc.feeRate()]);
      this.reads.catch(() => (this.reads = undefined));
    }
    return this.reads;
  }
}
