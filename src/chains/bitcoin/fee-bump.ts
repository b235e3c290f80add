import { broadcastBitcoinTx } from './broadcaster.ts';
import { bitcoinJobTx, enqueueBitcoinTx, outpointKey, reservedOutpoints, withWalletLock } from '../../store/bitcoin-jobs.ts';
import { bumpsOf, replaceBitcoinTx, unsettledBitcoinJobs, type BitcoinJobRow } from '../../store/bitcoin-jobs.ts';
import { utxosOf } from '../../store/bitcoin-utxos.ts';
import type { Db } from '../../store/database.ts';
import { buildCpfpTx } from './cpfp.ts';
import { relaysReplacements } from './rbf.ts';
import { BitcoinRpcError, type BitcoinRpc, type MempoolEntry } from './rpc.ts';
import { walletAddress } from './wallet-tx.ts';
import type { Log } from '../../log.ts';

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
  log?: Log;
}

/** Litecoin Core's default limit of unmined ancestors (itself included) of a mempool transaction: a child past it is refused. */
const ANCESTOR_LIMIT = 25;

/**
 * Bumps the chain's stuck Bitcoin-family jobs. A job is stuck when its transaction (or, after a bump,
 * its last child) has been in the node's mempool `afterBlocks` blocks, or its package pays less than
 * the node's estimate. A job written with replacements (a redeem or refund paying a client, which has
 * no output to the wallet) is replaced by the next one where the node relays replacements. Otherwise
 * the bump is a CPFP child: it spends an unreserved output of that transaction paying the
 * wallet back to the wallet, with a fee lifting the whole unmined package to the target rate. The
 * child is a job of its own (key `<job>:cpfp:<round>`, written under the wallet lock before it is
 * broadcast, its input reserved like any job's), so a crash or a second worker never makes two of a
 * round, and the relayer rebroadcasts and settles it like any other job.
 */
export class BitcoinFeeBumper {
  private readonly wallet: string;
  private readonly afterBlocks: number;
  private readonly maxRounds: number;
  private readonly maxFeeRate: bigint;
  private readonly replaceByFee: boolean;
  /** Jobs already reported as out of bumps, so the log says it once. */
  private readonly exhausted = new Set<string>();

  constructor(private readonly options: FeeBumpOptions) {
    this.wallet = walletAddress(options.walletKey, options.network);
    this.afterBlocks = options.afterBlocks ?? 2;
    this.maxRounds = options.maxRounds ?? 3;
    this.maxFeeRate = options.maxFeeRate ?? 200n;
    this.replaceByFee = options.replaceByFee ?? relaysReplacements(options.network);
  }

  /** One pass over the chain's unsettled jobs; returns how many bumps it wrote. */
  async tick(): Promise<number> {
    const { db, chain, rpc } = this.options;
    const jobs = await unsettledBitcoinJobs(db, chain);
    if (jobs.length === 0) return 0;
    const links = await bumpsOf(db, chain, jobs.map((j) => j.idempotencyKey));
    const [tip, estimate] = await Promise.all([rpc.getBlockCount(), rpc.feeRate()]);
    let written = 0;
    for (const job of jobs) {
      const rounds = links.filter((l) => l.bumps === job.idempotencyKey);
      if (await this.bump(job, rounds, tip, estimate)) written++;
    }
    return written;
  }

  private async bump(job: BitcoinJobRow, rounds: BitcoinJobRow[], tip: number, estimate: bigint): Promise<boolean> {
    if (job.replacements.length > 0 && this.replaceByFee) return this.replace(job, tip, estimate);
    // The last child the node may still mine carries the package; a refused one bumps nothing.
    const last = rounds.filter((r) => r.status !== 'failed').at(-1);
    const txid = last?.txid ?? job.txid;
    if (!txid) return false;
    const entry = await this.options.rpc.mempoolEntry(txid);
    if (!entry) return false;
    const target = this.targetRate(entry, tip, estimate);
    if (target === undefined) return false;
    const log = this.options.log;
    if (rounds.length >= this.maxRounds || entry.ancestorCount >= ANCESTOR_LIMIT) {
      if (!this.exhausted.has(job.idempotencyKey)) log?.warn({ job: job.idempotencyKey, txid, rounds: rounds.length }, 'stuck bitcoin transaction: no bump left');
      this.exhausted.add(job.idempotencyKey);
      return false;
    }
    const key = `${job.idempotencyKey}:cpfp:${rounds.length + 1}`;
    const { db, chain, network, walletKey } = this.options;
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
    if (!child) return false;
    log?.info({ job: job.idempotencyKey, round: rounds.length + 1, parent: txid, child: child.txid, feeRate: target.toString(), fee: child.fee.toString() }, 'bumped a stuck bitcoin transaction by CPFP');
    // The job is written: a failed broadcast is the relayer's to retry.
    await broadcastBitcoinTx(this.options.rpc, child.hex).catch((err: unknown) => log?.warn({ job: key, error: String(err) }, 'CPFP broadcast failed'));
    return true;
  }

  /**
   * Replaces a stuck transaction by its next version signed up front (the first paying the target
   * rate, else the highest): the job is switched to it, then it is broadcast; a version the node
   * refuses is switched back, so the relayer keeps sending one the node holds.
   */
  private async replace(job: BitcoinJobRow, tip: number, estimate: bigint): Promise<boolean> {
    const entry = await this.options.rpc.mempoolEntry(job.txid);
    if (!entry) return false;
    const target = this.targetRate(entry, tip, estimate);
    if (target === undefined) return false;
    const current = job.replacements.findIndex((v) => v.txid === job.txid);
    if (current === -1 && job.txid !== job.firstTxid) return false;
    const later = job.replacements.slice(current + 1).filter((v) => BigInt(v.feeRate) <= this.maxFeeRate);
    const next = later.find((v) => BigInt(v.feeRate) >= target) ?? later.at(-1);
    const log = this.options.log;
    if (!next) {
      if (!this.exhausted.has(job.idempotencyKey)) log?.warn({ job: job.idempotencyKey, txid: job.txid }, 'stuck bitcoin transaction: no replacement left');
      this.exhausted.add(job.idempotencyKey);
      return false;
    }
    const { db, rpc } = this.options;
    const previous = await bitcoinJobTx(db, job.idempotencyKey);
    if (!previous || previous.txid !== job.txid) return false;
    if (!(await replaceBitcoinTx(db, job.idempotencyKey, job.txid, next))) return false;
    try {
      await broadcastBitcoinTx(rpc, next.hex);
    } catch (err) {
      if (err instanceof BitcoinRpcError) await replaceBitcoinTx(db, job.idempotencyKey, next.txid, { txid: previous.txid, hex: previous.rawTx });
      log?.warn({ job: job.idempotencyKey, replacement: next.txid, error: String(err) }, 'RBF replacement not sent');
      return false;
    }
    log?.info({ job: job.idempotencyKey, replaced: job.txid, replacement: next.txid, feeRate: next.feeRate }, 'bumped a stuck bitcoin transaction by RBF');
    return true;
  }

  /**
   * The package rate to bump to, or undefined when the transaction is not stuck or a bump would not
   * raise what its package pays: the node's estimate, and after `afterBlocks` blocks at least a
   * quarter (1 sat/vB or more) above the package's current rate, capped at `maxFeeRate`.
   */
  private targetRate(entry: MempoolEntry, tip: number, estimate: bigint): bigint | undefined {
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
}
