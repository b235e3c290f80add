import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { HeldItem, JobItem, SendResult, SignResult, TxDriver, TxState } from '../../engine/driver.ts';
import { TxEngine, type EngineOptions } from '../../engine/engine.ts';
import type { JobSigner } from '../../store/schema.ts';
import { evmHexToTron } from './address.ts';
import type { TronApi } from './api.ts';
import { describeTronError, isNodeUnreachable, revertReason } from './chain-errors.ts';
import { jobCall, parseTronPayload, type TronJobPayload } from './jobs.ts';
import { expirationOf, hex41, signTronCall } from './transactions.ts';

export interface TronDriverOptions {
  /** Registry chain key, the queue's `chain`. */
  chain: string;
  api: TronApi;
  /** The key of the account that signs and pays the energy of every job of the chain and signer. */
  privateKey: Hex;
  signer: JobSigner;
  /** How long a signed transaction stays valid past the head block's time (default 60 s, as java-tron builds them). */
  expirationMs?: number;
  /** The most TRX (SUN) one transaction may burn for energy (default 150 TRX). */
  feeLimitSun?: bigint;
}

export const DEFAULT_FEE_LIMIT_SUN = 150_000_000n;

/**
 * The Tron driver: every new job is run first as a constant call from the signing account (a revert is
 * the chain's refusal), then signed offline against a solidified reference block (TAPOS) with an
 * expiration a minute past the head block. Tron has no nonces: transactions are independent, and a
 * signed one can land only until its expiration, so a job whose transaction expired unseen is signed
 * afresh (the engine does so for a funding only while rule 2 still allows it). Nothing cancels a Tron
 * transaction; an unsent one past its deadline is never sent, and a sent one expires within a minute.
 */
export class TronDriver implements TxDriver<TronJobPayload> {
  readonly chain: string;
  readonly signer: JobSigner;
  readonly sequenced = false;
  /** A resend refused (expired meanwhile, say) may have landed before: `states` tells, not the refusal. */
  readonly resendRefusalIsFinal = false;
  /** The account's base58 address. */
  readonly address: string;
  private readonly api: TronApi;
  private readonly expirationMs: number;
  private readonly feeLimitSun: bigint;

  constructor(private readonly options: TronDriverOptions) {
    this.chain = options.chain;
    this.signer = options.signer;
    this.api = options.api;
    this.address = evmHexToTron(privateKeyToAccount(options.privateKey).address);
    this.expirationMs = options.expirationMs ?? 60_000;
    this.feeLimitSun = options.feeLimitSun ?? DEFAULT_FEE_LIMIT_SUN;
  }

  parse = parseTronPayload;
  unreachable = isNodeUnreachable;
  describe = describeTronError;
  resignable = (): boolean => true;

  async *sign(items: ReadonlyArray<JobItem<TronJobPayload>>): AsyncIterable<Array<JobItem<TronJobPayload> & SignResult>> {
    const [head, reference] = await Promise.all([this.api.nowBlock(), this.api.nowBlock(true)]);
    const owner = hex41(this.address);
    const calls = items.map(({ payload }) => jobCall(payload));
    const simulated = await Promise.all(calls.map((call) => this.api.constantCall({ owner, contract: hex41(call.contract), data: call.data.slice(2) })));
    yield await Promise.all(
      items.map(async (item, i): Promise<JobItem<TronJobPayload> & SignResult> => {
        const sim = simulated[i]!;
        // It would revert now (not approved yet, not initiated yet, already done...): nothing is sent.
        if (!sim.ok) return { ...item, refused: describeTronError(revertReason(sim.message ?? 'reverted')) };
        const tx = await signTronCall({
          call: calls[i]!,
          owner: this.address,
          privateKey: this.options.privateKey,
          reference,
          expiration: head.timestampMs + this.expirationMs,
          feeLimitSun: this.feeLimitSun,
        });
        return { ...item, signed: { raw: JSON.stringify(tx), hash: tx.txID } };
      }),
    );
  }

  async broadcast(tx: { raw: string }): Promise<SendResult> {
    const answer = await this.api.broadcast(JSON.parse(tx.raw) as Record<string, unknown>).catch((err: unknown) => {
      if (isNodeUnreachable(err)) throw err;
      return { result: false, code: 'OTHER_ERROR', message: describeTronError(err) };
    });
    if (answer.result) return { outcome: 'sent' };
    // The node holds these very bytes already (a resend of one it has or ran).
    if (answer.code === 'DUP_TRANSACTION_ERROR') return { outcome: 'known' };
    return { outcome: 'refused', reason: describeTronError(`${answer.code}${answer.message ? `: ${answer.message}` : ''}`) };
  }

  async states(items: ReadonlyArray<HeldItem<TronJobPayload>>): Promise<TxState[]> {
    // The head first: a transaction not in any block up to a head past its expiration can never land.
    const head = await this.api.nowBlock();
    return Promise.all(
      items.map(async ({ signed }): Promise<TxState> => {
        const seen = await this.api.transactionInfo(signed.hash);
        if (!seen) {
          if (head.timestampMs >= expirationOf(signed.raw)) return { state: 'dropped', reason: `the signed transaction expired at ${new Date(expirationOf(signed.raw)).toISOString()} before it landed` };
          return { state: 'pending' };
        }
        const solid = await this.api.transactionInfo(signed.hash, true);
        if (!solid) return { state: 'seen' };
        // It landed and the contract refused it: a second transaction would be a second try at the same action.
        if (solid.failed) return { state: 'reverted', hash: signed.hash, reason: `transaction ${signed.hash} failed in block ${solid.blockNumber}: ${solid.result}` };
        return { state: 'landed', hash: signed.hash };
      }),
    );
  }
}

export type TronEngine = TxEngine<TronJobPayload> & { address: string };

/** The engine of one Tron chain and account (a recheck every 1.5 s: blocks are 3 s apart). */
export function tronEngine(options: TronDriverOptions & EngineOptions): TronEngine {
  const driver = new TronDriver(options);
  return Object.assign(new TxEngine(driver, { recheckMs: 1_500, retryMs: 3_000, ...options }), { address: driver.address });
}
