import { createHash, randomBytes } from 'node:crypto';
import { systemClock, unixSeconds, type Clock } from '../clock.ts';
import { chainAdapter, familyHtlc, normalizeParty, scriptKeysOf } from '../chains/adapters.ts';
import type { FamilyHtlc, HtlcTerms, SigningOptions } from '../chains/family.ts';
import type { Asset, Registry } from '../chains/registry.ts';
import type { SolverConfig } from '../config/service-config.ts';
import { AppError, conflict, invalid, shown } from '../errors.ts';
import type { FirmAnswer } from '../pricing/quote-auction.ts';
import { destinationAmount, noAnswer, type Quoter } from '../pricing/quote.ts';
import { answerStrategy, sourceRange, type Strategy } from '../pricing/strategies.ts';
import { registeredSolver } from '../store/solver-registry.ts';
import type { App } from '../store/apps.ts';
import type { Db } from '../store/database.ts';
import { findOrderByNonce, writeOrder, type NewOrder, type OrderRecord } from '../store/orders.ts';
import {
  DEADLINE_SECONDS,
  MAX_AFFILIATE_FEE_BIPS,
  MAX_AFFILIATE_FEES,
  MAX_SLIPPAGE_BIPS,
} from './limits.ts';
import type { SecretBox } from './secret-box.ts';
import { sourceTerms } from './source-terms.ts';

/** The create-order body after schema validation (types checked, values not yet). */
export interface CreateOrderBody {
  source: SideBody;
  destination: SideBody;
  slippage?: number;
  nonce?: string | number;
  solver_id?: string | null;
  secret_hash?: string | null;
  affiliate_fees?: Array<{ address: string; fee: number; asset?: string | null }> | null;
}

interface SideBody {
  asset: string;
  owner: string;
  amount: string;
  delegate?: string | null;
}

export interface OrderCreatorDeps {
  db: Db;
  registry: Registry;
  quoter: Quoter;
  secrets: SecretBox;
  solvers: readonly SolverConfig[];
  /** Assets affiliate fees may be paid in; the first is the default. */
  affiliateFeeAssets: readonly Asset[];
  /** Chain access some families need to build transactions (Solana: a recent blockhash). */
  signingOptions?: (asset: Asset) => Promise<Omit<SigningOptions, 'gasless'>>;
  /** The order's deadline counts from its time (default: the system clock). */
  clock?: Clock;
}

interface Side {
  asset: Asset;
  family: FamilyHtlc;
  owner: string;
  amount: bigint;
  /** The client's own key in the Bitcoin-family scripts, when it keeps one. */
  delegate: string | undefined;
}

interface AffiliateFee {
  address: string;
  fee: number;
  asset: Asset;
}

export interface CreatedOrder {
  /** False when the app's nonce already made this order: the same response again. */
  created: boolean;
  result: Record<string, unknown>;
}

/**
 * `POST /v2/orders`: validates every field, prices the order against the solvers' current quotes,
 * fixes timelocks, deadline and the secret, and writes the order while reserving the solver's
 * liquidity in one transaction. The same app and nonce always yield the same order.
 */
export class OrderCreator {
  private readonly solvers: ReadonlyMap<string, SolverConfig>;

  constructor(private readonly deps: OrderCreatorDeps) {
    this.solvers = new Map(deps.solvers.map((s) => [s.id, s]));
  }

  /** `version`: the API version the order is created through (shown as the order's `version`). */
  async create(app: App, body: CreateOrderBody, version: 'v2' | 'v3' = 'v2'): Promise<CreatedOrder> {
    const source = this.side('source', body.source);
    const destination = this.side('destination', body.destination);
    if (source.asset.id === destination.asset.id) throw invalid('destination.asset: must differ from source.asset');
    if (destination.amount > destination.asset.maxAmount) {
      throw invalid(`destination.amount: at most ${destination.asset.maxAmount} ${destination.asset.id} base units`);
    }
    const slippage = this.slippage(body.slippage, app);
    const nonce = this.nonce(body.nonce);
    const clientSecretHash = this.secretHash(body.secret_hash);
    const fees = this.affiliateFees(body.affiliate_fees);
    const solverId = body.solver_id ?? undefined;
    const requestHash = fingerprint({
      source: plainSide(source),
      destination: plainSide(destination),
      slippage,
      solverId: solverId ?? null,
      secretHash: clientSecretHash ?? null,
      fees: fees.map((f) => [f.address, f.fee, f.asset.id]),
    });

    let candidates: ReturnType<OrderCreator['candidates']>;
    try {
      const { quoter } = this.deps;
      const { strategies, external } = await quoter.competitors(source.asset, destination.asset, solverId);
      const affiliateFeeBips = fees.reduce((sum, f) => sum + f.fee, 0);
      const ask = { from: source.asset, to: destination.asset, sourceAmount: source.amount, affiliateFeeBips, purpose: 'order' as const };
      candidates = this.candidates(source, destination, slippage, fees, strategies, await quoter.answers(ask, external));
      const best = candidates[0]!;
      const offer = { solverId: best.strategy.solverId, sourceAmount: source.amount, destinationAmount: best.quoted };
      const match = await quoter.matchFirst(ask, offer, external);
      if (match) {
        const matched = { ...best, strategy: answerStrategy(match.solverId, source.asset, destination.asset), quoted: match.destinationAmount };
        candidates = [matched, ...candidates.filter((c) => c.strategy.solverId !== match.solverId)];
      }
    } catch (err) {
      // A replay must get its order even when prices have moved since.
      const existing = await findOrderByNonce(this.deps.db, app.id, nonce);
      if (existing) return this.replay(existing, requestHash, app);
      throw err;
    }
    const orderId = createHash('sha256').update(`hashlock:order:${app.id}:${nonce}`).digest('hex');
    let secretHash = clientSecretHash;
    let secretCiphertext: Uint8Array | null = null;
    if (secretHash === undefined) {
      const secret = randomBytes(32);
      secretHash = createHash('sha256').update(secret).digest('hex');
      secretCiphertext = this.deps.secrets.seal(secret);
    }
    // One key the service holds for the client, for every side whose script names the client by key and that got no delegate.
    let serviceKey: { party: string; ciphertext: Uint8Array } | undefined;
    const keyless = [source, destination].find((s) => scriptKeysOf(s.asset.chain) && s.delegate === undefined);
    if (keyless) {
      const { privateKey, party } = scriptKeysOf(keyless.asset.chain)!.newKey();
      serviceKey = { party, ciphertext: this.deps.secrets.seal(privateKey) };
    }

    const now = unixSeconds(this.deps.clock ?? systemClock);
    const deadline = BigInt(now + (chainAdapter(source.asset.chain)?.sourceDeadlineSeconds ?? DEADLINE_SECONDS));
    let lastError: AppError | undefined;
    for (const candidate of candidates) {
      const solverId = candidate.strategy.solverId;
      const addresses = await this.addressesOf(solverId);
      const solverParty = (side: Side) => normalizeParty(side.asset.chain, addresses[side.asset.chain.key] ?? '');
      if (!solverParty(source) || !solverParty(destination)) {
        lastError ??= new AppError('no_route', `solver ${solverId} has no address on ${source.asset.chain.key} or ${destination.asset.chain.key} now`);
        continue;
      }
      const userKey = (side: Side) => side.delegate ?? serviceKey?.party ?? '';
      const party = (side: Side, who: 'user' | 'solver') => {
        if (who === 'solver') return solverParty(side)!;
        return scriptKeysOf(side.asset.chain) ? userKey(side) : side.owner;
      };
      const sourceTerms: HtlcTerms = {
        asset: source.asset,
        initiator: party(source, 'user'),
        redeemer: party(source, 'solver'),
        timelock: BigInt(source.asset.chain.sourceTimelock),
        amount: source.amount,
        secretHash,
      };
      const destinationTerms: HtlcTerms = {
        asset: destination.asset,
        initiator: party(destination, 'solver'),
        redeemer: party(destination, 'user'),
        timelock: BigInt(destination.asset.chain.destinationTimelock),
        amount: destination.amount,
        secretHash,
      };
      checkTimelockOrder(sourceTerms, destinationTerms);
      const signing = await this.signingData(sourceTerms, app);
      const order: NewOrder = {
        id: orderId,
        appId: app.id,
        nonce,
        solverId,
        integrator: app.name,
        version,
        slippage,
        secretHash,
        secretCiphertext,
        delegateKeyCiphertext: serviceKey?.ciphertext ?? null,
        requestHash,
        deadline,
        source: swapOf(source, sourceTerms, 'initiator', candidate.sourcePrice),
        destination: swapOf(destination, destinationTerms, 'redeemer', candidate.destinationPrice),
        affiliateFees: fees.map((f) => ({
          address: f.address,
          fee: f.fee,
          asset: f.asset.id,
          amount: this.feeAmount(source, f),
        })),
        quote: { feeBips: candidate.strategy.feeBips, fixedFee: candidate.strategy.fixedFeeUsd, estimatedTime: candidate.strategy.estimatedTime },
      };
      try {
        const reservation = { solverId, asset: destination.asset.id, amount: destination.amount };
        if (await writeOrder(this.deps.db, order, reservation)) return { created: true, result: { order_id: orderId, ...signing } };
        lastError = new AppError('insufficient_liquidity', `insufficient liquidity: no solver can pay ${destination.amount} ${destination.asset.id} now`);
      } catch (err) {
        const constraint = uniqueViolation(err);
        if (constraint === 'orders_app_id_nonce_key' || constraint === 'orders_pkey') {
          const winner = await findOrderByNonce(this.deps.db, app.id, nonce);
          if (winner) return this.replay(winner, requestHash, app);
        }
        if (constraint === 'orders_secret_hash') throw conflict('secret_hash: already used by another order; use a fresh secret');
        if (constraint === 'swaps_chain_swap_id_key') throw conflict('an order with the same HTLC terms exists already');
        throw err;
      }
    }
    const existing = await findOrderByNonce(this.deps.db, app.id, nonce);
    if (existing) return this.replay(existing, requestHash, app);
    throw lastError ?? new AppError('insufficient_liquidity', 'insufficient liquidity');
  }

  private side(name: 'source' | 'destination', body: SideBody): Side {
    const asset = this.deps.registry.asset(body.asset);
    if (!asset) throw invalid(`${name}.asset: unknown asset ${shown(body.asset)}`);
    if (!asset.isActive) throw invalid(`${name}.asset: ${asset.id} is not active`);
    const family = familyHtlc(asset.chain);
    if (!family) throw new AppError('not_supported', `${name}.asset: swaps on ${asset.chain.family} chains are not supported yet`);
    const owner = family.normalizeAddress(asset.chain, body.owner.trim());
    if (owner === undefined) throw invalid(`${name}.owner: ${shown(body.owner)} is not a valid address on ${asset.chain.key}`);
    const amount = BigInt(body.amount);
    if (amount <= 0n) throw invalid(`${name}.amount: must be greater than 0`);
    let delegate: string | undefined;
    if (body.delegate !== undefined && body.delegate !== null && body.delegate !== '') {
      const keys = scriptKeysOf(asset.chain);
      if (!keys) throw invalid(`${name}.delegate: only a side whose scripts name keys (Bitcoin family) takes a delegate`);
      delegate = keys.parseDelegate(body.delegate);
      if (delegate === undefined) throw invalid(`${name}.delegate: must be ${keys.delegateDescription}`);
    }
    return { asset, family, owner, amount, delegate };
  }

  private slippage(value: number | undefined, app: App): number {
    const slippage = value ?? app.defaultSlippage;
    if (!Number.isInteger(slippage) || slippage < 0 || slippage > MAX_SLIPPAGE_BIPS) {
      throw invalid(`slippage: must be a whole number of bips from 0 to ${MAX_SLIPPAGE_BIPS}`);
    }
    return slippage;
  }

  private nonce(value: string | number | undefined): string {
    if (value === undefined) return randomBytes(16).toString('hex');
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || value < 0) throw invalid('nonce: must be a non-negative whole number or a string');
      return String(value);
    }
    if (!/^[\x21-\x7e]{1,128}$/.test(value)) throw invalid('nonce: must be 1 to 128 printable characters without spaces');
    return value;
  }

  private secretHash(value: string | null | undefined): string | undefined {
    if (value === undefined || value === null) return undefined;
    const hex = value.startsWith('0x') ? value.slice(2) : value;
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw invalid('secret_hash: must be sha256(secret) as 64 hexadecimal characters');
    return hex.toLowerCase();
  }

  private affiliateFees(value: CreateOrderBody['affiliate_fees']): AffiliateFee[] {
    if (!value || value.length === 0) return [];
    if (value.length > MAX_AFFILIATE_FEES) throw invalid(`affiliate_fees: at most ${MAX_AFFILIATE_FEES} entries`);
    const allowed = this.deps.affiliateFeeAssets;
    if (allowed.length === 0) throw invalid('affiliate_fees: this service pays no affiliate fees');
    const fees = value.map((f, i): AffiliateFee => {
      const where = `affiliate_fees[${i}]`;
      if (!Number.isInteger(f.fee) || f.fee < 1 || f.fee > MAX_AFFILIATE_FEE_BIPS) {
        throw invalid(`${where}.fee: must be a whole number of bips from 1 to ${MAX_AFFILIATE_FEE_BIPS}`);
      }
      const asset = f.asset ? allowed.find((a) => a.id === f.asset!.toLowerCase()) : allowed[0];
      if (!asset) throw invalid(`${where}.asset: must be one of ${allowed.map((a) => a.id).join(', ')}`);
      const address = familyHtlc(asset.chain)?.normalizeAddress(asset.chain, f.address);
      if (address === undefined) throw invalid(`${where}.address: ${shown(f.address)} is not a valid address on ${asset.chain.key}`);
      return { address, fee: f.fee, asset };
    });
    const total = fees.reduce((sum, f) => sum + f.fee, 0);
    if (total > MAX_AFFILIATE_FEE_BIPS) throw invalid(`affiliate_fees: ${total} bips in all; at most ${MAX_AFFILIATE_FEE_BIPS}`);
    return fees;
  }

  /**
   * The solvers that would fill this order, best price first: each quotes the source amount, and
   * the asked destination amount may be at most `slippage` bips better for the client than that.
   */
  private candidates(source: Side, destination: Side, slippage: number, fees: AffiliateFee[], strategies: readonly Strategy[], answers: readonly FirmAnswer[]) {
    const { quoter } = this.deps;
    const prices = quoter.pricesOf(source.asset, destination.asset);
    const affiliateBips = fees.reduce((sum, f) => sum + f.fee, 0);
    const atPrices = { sourcePrice: Number(prices.source) / 1e6, destinationPrice: Number(prices.destination) / 1e6 };
    const priced = [
      ...strategies.map((strategy: Strategy) => ({ strategy, quoted: destinationAmount(strategy, source.amount, prices, affiliateBips), ...atPrices })),
      ...answers.map((a) => ({ strategy: answerStrategy(a.solverId, source.asset, destination.asset), quoted: a.destinationAmount, ...atPrices })),
    ];
    if (priced.length === 0) throw noAnswer(source.asset, destination.asset, quoter.auction);
    const inRange = priced.filter(({ strategy }) => {
      const { min, max } = sourceRange(strategy);
      return source.amount >= min && source.amount <= max;
    });
    if (inRange.length === 0) {
      const { min, max } = sourceRange(priced[0]!.strategy);
      throw new AppError('amount_out_of_range', `source.amount: expected amount to be within the range of ${min} to ${max}`);
    }
    const acceptable = inRange.filter((c) => destination.amount * 10_000n <= c.quoted * BigInt(10_000 + slippage));
    if (acceptable.length === 0) {
      const best = inRange.reduce((a, b) => (b.quoted > a.quoted ? b : a));
      throw new AppError(
        'slippage_exceeded',
        `destination.amount: ${destination.amount} is more than the price allows; at most ` +
          `${(best.quoted * BigInt(10_000 + slippage)) / 10_000n} with slippage ${slippage} bips (quote: ${best.quoted})`,
      );
    }
    return acceptable.sort((a, b) => (b.quoted > a.quoted ? 1 : b.quoted < a.quoted ? -1 : 0));
  }

  /** A solver's address per chain: of the config for an in-process solver, else its proven ones. */
  private async addressesOf(solverId: string): Promise<Record<string, string>> {
    const configured = this.solvers.get(solverId);
    if (configured) return configured.addresses;
    const registered = await registeredSolver(this.deps.db, solverId);
    // Revoked after its answer (its stream notices within seconds): no addresses, so not matched.
    if (!registered || registered.revoked) return {};
    return Object.fromEntries(registered.addresses.map((a) => [a.chain, a.address]));
  }

  /** Fee bips of the source amount, paid in the fee asset at order-time prices. */
  private feeAmount(source: Side, fee: AffiliateFee): bigint {
    const prices = this.deps.quoter.pricesOf(source.asset, fee.asset);
    return (
      (source.amount * BigInt(fee.fee) * prices.source * 10n ** BigInt(fee.asset.decimals)) /
      (10_000n * prices.destination * 10n ** BigInt(source.asset.decimals))
    );
  }

  private async signingData(terms: HtlcTerms, app: App): Promise<Record<string, unknown>> {
    const extra = (await this.deps.signingOptions?.(terms.asset)) ?? {};
    try {
      return await familyHtlc(terms.asset.chain)!.sourceSigningData(terms, { ...extra, gasless: app.gasless });
    } catch (err) {
      throw new AppError('unavailable', `cannot build the ${terms.asset.chain.key} transactions now: ${(err as Error).message}`, { cause: err });
    }
  }

  /** A request with an app's nonce that already made an order: the same order again, or a conflict. */
  private async replay(order: OrderRecord, requestHash: string, app: App): Promise<CreatedOrder> {
    if (order.requestHash !== requestHash) throw conflict('nonce: already used by this app for a different order');
    const terms = sourceTerms(order, this.deps.registry)!;
    return { created: false, result: { order_id: order.id, ...(await this.signingData(terms, app)) } };
  }
}


/**
 * The swap row. On a Bitcoin-family side the client's owner address is shown in its role
 * (`user`) and the key its script names is the delegate.
 */
function swapOf(side: Side, terms: HtlcTerms, user: 'initiator' | 'redeemer', price: number): NewOrder['source'] {
  const scriptKeys = scriptKeysOf(side.asset.chain) !== undefined;
  return {
    swapId: side.family.swapId(terms),
    chain: side.asset.chain.key,
    asset: side.asset.id,
    initiator: scriptKeys && user === 'initiator' ? side.owner : terms.initiator,
    redeemer: scriptKeys && user === 'redeemer' ? side.owner : terms.redeemer,
    delegate: scriptKeys ? terms[user] : '',
    timelock: terms.timelock,
    amount: terms.amount,
    assetPrice: price,
    requiredConfirmations: side.asset.chain.confirmationTarget,
  };
}

/** Safety rule 2 per order: in seconds, the destination timelock is at most half the source's. */
function checkTimelockOrder(source: HtlcTerms, destination: HtlcTerms): void {
  const sourceMs = source.timelock * BigInt(source.asset.chain.blockTimeMs);
  const destinationMs = destination.timelock * BigInt(destination.asset.chain.blockTimeMs);
  if (destinationMs * 2n > sourceMs) {
    throw new AppError('internal', `timelocks of ${source.asset.chain.key} -> ${destination.asset.chain.key} break safety rule 2`);
  }
}

const plainSide = (side: Side) => [side.asset.id, side.owner, side.amount.toString(), side.delegate ?? null];

function fingerprint(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' ? e.constraint : undefined;
}

