import { systemClock, type Clock } from '../../clock.ts';
import { xOnlyPublicKeyOf } from './address.ts';
import { htlcAddress } from './htlc.ts';
import { buildRedeemTx, buildRefundTx } from './htlc-spend.ts';
import type { BitcoinRpc } from './rpc.ts';
import { clientAddress, swapScriptTerms } from './swap-terms.ts';
import { addressScript, buildWalletTx, walletAddress, type Outpoint, type SignedTx, type Utxo } from './wallet-tx.ts';
import type { Chain } from '../registry.ts';
import type { SecretBox } from '../../orders/secret-box.ts';
import { openServiceKey } from './service-key.ts';
import { bitcoinJobTx, enqueueBitcoinTx, fundingAttempts, withWalletLock, type BitcoinPayload } from './store/jobs.ts';
import { utxosOf } from './store/utxos.ts';
import type { Db } from '../../store/database.ts';
import type { OrderRecord } from '../../store/orders.ts';
import type { SolverChain, SourceCheck } from '../../solver/solver.ts';
import { BitcoinFeeBumper, type FeeBumpOptions } from './fee-bump.ts';
import { buildCancelTx, feeLadder, RBF_SEQUENCE, relaysReplacements, signalsReplacement, type TxVersion } from './rbf.ts';
import type { NewTx } from '../../engine/driver.ts';
import { fitsUnderLimits, MEMPOOL_CHAIN_LIMIT, walletCoins } from './wallet-coins.ts';

/** How many spendable outputs the solver keeps its wallet spread over (the change is split below it). */
export const WALLET_SPREAD = 16;

/**
 * The solver on one Bitcoin-family chain. Its wallet is the key-path P2TR address of its key, whose
 * x-only public key is the solver's address in the scripts. Its coins, and every HTLC's, are the
 * outputs the watcher recorded. Each transaction is written as a relayer job with its signed bytes,
 * under a key per order and step, and nothing more: the chain's transaction engine broadcasts it (and
 * again until the watcher sees it mined, never a funding past its deadline), so after a crash the same
 * bytes go out, never a second payment.
 */
export class BitcoinSolverChain implements SolverChain {
  readonly xOnly: string;
  readonly wallet: string;

  constructor(
    readonly chain: Chain,
    private readonly db: Db,
    private readonly rpc: BitcoinRpc,
    private readonly key: Uint8Array,
    private readonly secrets: SecretBox,
    /** Whether the chain's nodes relay BIP125 replacements (default: what the network's node software does). */
    private readonly replaceByFee = relaysReplacements(chain.network),
    /** Not read: rule 2's deadline is checked by the engine, on its own clock. */
    private readonly clock: Clock = systemClock,
  ) {
    if (chain.family !== 'bitcoin') throw new Error(`${chain.key} is not a Bitcoin-family chain`);
    this.xOnly = xOnlyPublicKeyOf(key);
    this.wallet = walletAddress(key, chain.network);
  }

  /** The bumper of the chain's stuck transactions, paying from this wallet (CPFP from its outputs). */
  feeBumper(options: Pick<FeeBumpOptions, 'afterBlocks' | 'maxRounds' | 'maxFeeRate' | 'replaceByFee'> = {}): BitcoinFeeBumper {
    return new BitcoinFeeBumper({ ...options, db: this.db, chain: this.chain.key, network: this.chain.network, rpc: this.rpc, walletKey: this.key });
  }

  /** A funding job is written and may still be mined, or it failed by rule 2: no funding is to be written. */
  async destinationFunded(order: OrderRecord): Promise<boolean> {
    return (await this.nextFunding(this.db, order)) === undefined;
  }

  /**
   * The key of the order's next funding job, and the earliest deadline of those before it; undefined
   * when none may be written: one is live or mined, or one failed that a block has not made unminable
   * (its inputs spent by another transaction), or one failed by safety rule 2. So an order never has
   * two fundings that could both be mined. Read under the wallet lock before writing.
   */
  private async nextFunding(db: Db, order: OrderRecord): Promise<{ key: string; broadcastBy?: Date } | undefined> {
    const attempts = await fundingAttempts(db, this.chain.key, order.id);
    if (attempts.length === 0) return { key: `${order.id}:fund` };
    if (!attempts.every((a) => a.status === 'failed' && a.spentElsewhere && !a.byRule2)) return undefined;
    const deadlines = attempts.flatMap((a) => (a.broadcastBy ? [a.broadcastBy.getTime()] : []));
    return { key: `${order.id}:fund:${attempts.length + 1}`, ...(deadlines.length > 0 ? { broadcastBy: new Date(Math.min(...deadlines)) } : {}) };
  }

  async checkSource(order: OrderRecord): Promise<SourceCheck> {
    const terms = swapScriptTerms(order.source, 'source', order.secretHash);
    if (terms.redeemer !== this.xOnly) return { problem: 'the source redeemer is not this solver' };
    // The address commits to every term (keys, secret hash, timelock): rule 1 is the address and the amount.
    if (htlcAddress(terms, this.chain.network) !== order.source.swapId) return { problem: "the source HTLC address is not the address of the order's terms" };
    const funding = (await utxosOf(this.db, this.chain.key, order.source.swapId, { unspent: true })).filter((u) => u.blockNumber !== null);
    const amount = funding.reduce((sum, u) => sum + u.value, 0n);
    if (amount < BigInt(order.source.amount)) return { problem: `the source HTLC holds ${amount} confirmed, less than the order's ${order.source.amount}` };
    // The client can refund each output `timelock` blocks after it confirmed: the earliest one counts.
    const earliest = funding.reduce((min, u) => (u.blockNumber! < min ? u.blockNumber! : min), funding[0]!.blockNumber!);
    const tip = BigInt(await this.rpc.getBlockCount());
    return { blocksLeft: earliest + terms.timelock - tip };
  }

  checkDestination(order: OrderRecord): string | undefined {
    const terms = swapScriptTerms(order.destination, 'destination', order.secretHash);
    if (terms.initiator !== this.xOnly) return 'the destination initiator is not this solver';
    if (htlcAddress(terms, this.chain.network) !== order.destination.swapId) return "the destination swap id is not the HTLC address of the destination's terms";
    return undefined;
  }

  async fundDestination(order: OrderRecord, fundBy: Date): Promise<void> {
    const feeRate = await this.rpc.feeRate();
    const amount = BigInt(order.destination.amount);
    // Picking the wallet's outputs and writing the job that spends them happen under the wallet lock,
    // so an instant-refund fee input never takes the same output, nor do two fundings.
    await withWalletLock(this.db, this.chain.key, async (trx) => {
      const next = await this.nextFunding(trx, order);
      if (!next) return;
      const wallet = await walletCoins(trx, this.chain.key, this.wallet, addressScript(this.wallet, this.chain.network));
      if (wallet.coins.length === 0 && wallet.atLimit > 0) {
        throw new Error(`the wallet's ${wallet.atLimit} unconfirmed outputs are at the node's chain limit (${MEMPOOL_CHAIN_LIMIT}): funding after the next block`);
      }
      const build = (splitChange?: { outputs: number; min: bigint }) =>
        buildWalletTx({
          privateKey: this.key,
          network: this.chain.network,
          utxos: wallet.coins,
          inOrder: true,
          to: { address: order.destination.swapId, amount },
          feeRate,
          changeAddress: this.wallet,
          ...(splitChange ? { splitChange } : {}),
          // Replaceable where nodes relay replacements, so it can be taken back past its deadline.
          ...(this.replaceByFee ? { sequence: RBF_SEQUENCE } : {}),
        });
      let built = build();
      // Few spendable outputs left: the change is split so that the next fundings, in this block
      // interval and after it, spend outputs of their own rather than chaining on one.
      const left = wallet.coins.length - built.spent.length;
      if (left < WALLET_SPREAD) built = build({ outputs: WALLET_SPREAD - left, min: amount });
      const inputs = built.spent.map((o) => wallet.coins.find((c) => c.txid === o.txid && c.vout === o.vout)!);
      if (!fitsUnderLimits(inputs, wallet.descendants)) {
        throw new Error(`the wallet's unconfirmed transactions are at the node's chain limit (${MEMPOOL_CHAIN_LIMIT}): funding after the next block`);
      }
      // A funding again keeps the first one's deadline where it is earlier (safety rule 2, checked by the engine).
      const broadcastBy = next.broadcastBy && next.broadcastBy < fundBy ? next.broadcastBy : fundBy;
      await enqueueBitcoinTx(trx, { chain: this.chain.key, orderId: order.id, action: 'fund', idempotencyKey: next.key, rawTx: built.hex, txid: built.txid, inputs: built.spent, broadcastBy });
    });
  }

  /**
   * A transaction that takes the place of a funding not mined by its broadcast deadline (safety rule
   * 2): its inputs back to the wallet (`buildCancelTx`). None where the nodes relay no replacements,
   * the funding does not signal one, it is not in the mempool (the engine then waits for it to be
   * mined or dropped), or it has unmined descendants, which a replacement would evict with it.
   */
  async cancelFunding(payload: BitcoinPayload, signed: { raw: string; hash: string }): Promise<NewTx | undefined> {
    if (!this.replaceByFee || !signalsReplacement(signed.raw)) return undefined;
    const entry = await this.rpc.mempoolEntry(signed.hash);
    if (!entry || entry.descendantCount > 1) return undefined;
    const coins = await utxosOf(this.db, this.chain.key, this.wallet);
    const inputs = payload.inputs.map((i) => coins.find((c) => c.txid === i.txid && c.vout === i.vout));
    if (inputs.some((c) => c === undefined)) return undefined;
    const tx = buildCancelTx({
      privateKey: this.key,
      network: this.chain.network,
      inputs: inputs.map((c) => ({ txid: c!.txid, vout: c!.vout, value: c!.value })),
      replacedFee: entry.fee,
      extraRate: await this.rpc.feeRate(),
      to: this.wallet,
    });
    return tx && { raw: tx.hex, hash: tx.txid };
  }

  async redeem(order: OrderRecord, side: 'source' | 'destination', secret: Buffer): Promise<boolean> {
    const key = side === 'source' ? `${order.id}:solver-redeem` : `${order.id}:redeem`;
    if (await bitcoinJobTx(this.db, key)) return false;
    const swap = order[side];
    // The solver redeems its source with its own key, and a client's destination with the key the
    // service holds for that client; a client with its own delegate key redeems by itself.
    const redeemerKey = side === 'source' ? this.key : await this.serviceKey(order, 'destination');
    if (!redeemerKey) return false;
    const utxos = await this.htlcUtxos(swap.swapId);
    if (utxos.length === 0) return false;
    const build = (feeRate: bigint) =>
      buildRedeemTx({
        terms: swapScriptTerms(swap, side, order.secretHash),
        network: this.chain.network,
        utxos,
        to: side === 'source' ? this.wallet : clientAddress(swap, 'destination'),
        feeRate,
        secret,
        redeemerKey,
      });
    const feeRate = await this.rpc.feeRate();
    // The solver's own redeem pays its wallet, so CPFP can bump it; a client's is replaced instead.
    const [tx, ...replacements] = side === 'source' ? [build(feeRate)] : feeLadder(build, feeRate);
    await this.send(order, side === 'source' ? 'solver-redeem' : 'redeem', tx, utxos, replacements);
    return true;
  }

  async refundDestination(order: OrderRecord): Promise<boolean> {
    const terms = swapScriptTerms(order.destination, 'destination', order.secretHash);
    if (terms.initiator !== this.xOnly) return false;
    return this.refund(order, 'destination', this.key, this.wallet, 'solver-refund');
  }

  async refundSourceForClient(order: OrderRecord): Promise<boolean> {
    const clientKey = await this.serviceKey(order, 'source');
    if (!clientKey) return false;
    // The same job key as PATCH ?action=refund: one refund transaction, whoever asks first.
    return this.refund(order, 'source', clientKey, clientAddress(order.source, 'source'), 'refund');
  }

  /** Refunds one side's HTLC with its initiator's key once the CSV timelock allows it. */
  private async refund(order: OrderRecord, side: 'source' | 'destination', initiatorKey: Uint8Array, to: string, action: string): Promise<boolean> {
    if (await bitcoinJobTx(this.db, `${order.id}:${action}`)) return false;
    const swap = order[side];
    const terms = swapScriptTerms(swap, side, order.secretHash);
    const records = await utxosOf(this.db, this.chain.key, swap.swapId, { unspent: true });
    const heights = records.map((u) => u.blockNumber);
    if (records.length === 0 || heights.includes(null)) return false;
    // The refund enters the next block at the earliest: CSV holds there once every output is `timelock` deep.
    const tip = BigInt(await this.rpc.getBlockCount());
    const latest = heights.reduce<bigint>((max, h) => (h! > max ? h! : max), 0n);
    if (tip + 1n < latest + terms.timelock) return false;
    const utxos = records.map((u) => ({ txid: u.txid, vout: u.vout, value: u.value }));
    const build = (feeRate: bigint) => buildRefundTx({ terms, network: this.chain.network, utxos, to, feeRate, initiatorKey });
    const feeRate = await this.rpc.feeRate();
    // A refund to the solver's wallet is bumped by CPFP; one paying a client is replaced instead.
    const [tx, ...replacements] = to === this.wallet ? [build(feeRate)] : feeLadder(build, feeRate);
    await this.send(order, action, tx, utxos, replacements);
    return true;
  }

  /** The HTLC's unspent outputs (mempool included), oldest first. */
  private async htlcUtxos(address: string): Promise<Utxo[]> {
    return (await utxosOf(this.db, this.chain.key, address, { unspent: true })).map((u) => ({ txid: u.txid, vout: u.vout, value: u.value }));
  }

  private serviceKey(order: OrderRecord, side: 'source' | 'destination'): Promise<Uint8Array | undefined> {
    return openServiceKey(this.db, this.secrets, order.id, order[side]);
  }

  /** Writes the transaction's job (the engine sends it); when a job exists under the key, that one stays. */
  private async send(order: OrderRecord, action: string, tx: SignedTx, inputs: readonly Outpoint[], replacements: readonly TxVersion[] = []): Promise<void> {
    await enqueueBitcoinTx(this.db, { chain: this.chain.key, orderId: order.id, action, idempotencyKey: `${order.id}:${action}`, rawTx: tx.hex, txid: tx.txid, inputs, replacements });
  }
}
