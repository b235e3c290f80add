import { randomUUID } from 'node:crypto';
import type { Asset } from '../chains/registry.ts';
import { systemClock, unixSeconds, type Clock } from '../clock.ts';
import { AppError, invalid, notFound } from '../errors.ts';

/** What the service asks the registered solvers that serve a pair. */
export interface QuoteAsk {
  from: Asset;
  to: Asset;
  /** Exactly one: what the client sends, or what it wants to receive. */
  sourceAmount?: bigint;
  destinationAmount?: bigint;
  /** Total affiliate bips, which come out of the destination amount the solver answers. */
  affiliateFeeBips: number;
  /** `quote`: a price shown to a client; `order`: the price an order is matched at if this answer wins. */
  purpose: 'quote' | 'order';
}

/** A registered solver's firm answer: it fills at these amounts until `expiresAt` (unix seconds). */
export interface FirmAnswer {
  solverId: string;
  sourceAmount: bigint;
  destinationAmount: bigint;
  expiresAt: number;
}

/** Amounts of a best price so far, offered to the operator's chosen solvers to match. */
export interface Offer {
  sourceAmount: bigint;
  destinationAmount: bigint;
}

/** An answer's body as `POST /solver/v1/quote-requests/{id}` takes it (schema-checked: digits, an integer). */
export interface AnswerBody {
  source_amount: string;
  destination_amount: string;
  expires_at: number;
}

interface Connection {
  solverId: string;
  pairs: Set<string>;
  /** Writes one SSE frame to the solver's stream. */
  send: (frame: string) => void;
}

interface OpenRequest {
  ask: QuoteAsk;
  /** A match request's answers bind to that offer only; the others stand (see `standing`). */
  matching: boolean;
  askedOf: Set<string>;
  answers: FirmAnswer[];
  closesAt: number;
  done: () => void;
}

/** How long a closed request's id is remembered, to tell a late answer from an unknown one. */
const CLOSED_MEMORY_MS = 60_000;
/** The longest a firm answer may promise to hold. */
const MAX_ANSWER_SECONDS = 3600;
/** An answer stands until its expiry less this, so no order is matched on a price in its last seconds. */
export const STANDING_MARGIN_SECONDS = 2;
/** The most asks whose answers are kept standing; the oldest go first. */
const MAX_STANDING_ASKS = 10_000;

const pairKey = (from: string, to: string) => `${from}>${to}`;
/** Answers stand under what an order names: the pair, the source amount it sends, its affiliate fee. */
const standingKey = (ask: QuoteAsk, sourceAmount: bigint) => `${pairKey(ask.from.id, ask.to.id)}|${sourceAmount}|${ask.affiliateFeeBips}`;

/** What became of a quote request sent to a solver: answered in time, not in time, or answered too late (refused). */
export type AskOutcome = 'answered' | 'unanswered' | 'late';

export interface QuoteAuctionOptions {
  /** How long solvers have to answer (default 300 ms). */
  deadlineMs?: number;
  clock?: Clock;
  /** Told each outcome, for the metrics. */
  onOutcome?: (solverId: string, outcome: AskOutcome) => void;
}

/**
 * Quote requests to the registered solvers connected to this instance (`GET /solver/v1/quote-requests`),
 * and their answers. `ask` sends a request to every connected solver that registered the pair and is
 * not excluded, and resolves with the answers that arrived before the deadline, as soon as every asked
 * solver has answered or when the deadline passes. An answer after that is refused (`quote_closed`).
 *
 * An answer is firm until its `expires_at`: it stands, and an order for the same pair, source amount and
 * affiliate fee is matched on the standing answers of the solvers asked, without a second request. A
 * client quotes before it orders, so its order waits on no solver, however busy the solvers are then.
 */
export class QuoteAuction {
  private readonly connections = new Map<string, Set<Connection>>();
  private readonly open = new Map<string, OpenRequest>();
  /** Recently closed requests: when, and whom they asked. */
  private readonly closed = new Map<string, { at: number; askedOf: ReadonlySet<string> }>();
  /** Answers still firm, by `standingKey` then solver; the newest answer of a solver replaces its older one. */
  private readonly standing = new Map<string, Map<string, FirmAnswer>>();
  readonly deadlineMs: number;
  private readonly clock: Clock;
  private readonly onOutcome: (solverId: string, outcome: AskOutcome) => void;

  constructor(options: QuoteAuctionOptions = {}) {
    this.deadlineMs = options.deadlineMs ?? 300;
    this.clock = options.clock ?? systemClock;
    this.onOutcome = options.onOutcome ?? (() => undefined);
  }

  /** Adds a solver's stream serving `pairs` ([source asset, destination asset]); returns what removes it. */
  connect(solverId: string, pairs: Iterable<readonly [string, string]>, send: (frame: string) => void): () => void {
    const connection: Connection = { solverId, pairs: new Set([...pairs].map(([f, t]) => pairKey(f, t))), send };
    let set = this.connections.get(solverId);
    if (!set) this.connections.set(solverId, (set = new Set()));
    set.add(connection);
    return () => {
      set.delete(connection);
      if (set.size === 0 && this.connections.get(solverId) === set) this.connections.delete(solverId);
    };
  }

  /** Replaces the pairs of a solver's open streams on this instance (it registered others). */
  setPairs(solverId: string, pairs: Iterable<readonly [string, string]>): void {
    const keys = [...pairs].map(([f, t]) => pairKey(f, t));
    for (const connection of this.connections.get(solverId) ?? []) connection.pairs = new Set(keys);
  }

  /** The connected solvers that serve a pair. */
  serving(from: Asset, to: Asset): string[] {
    const key = pairKey(from.id, to.id);
    const ids: string[] = [];
    for (const [solverId, set] of this.connections) if ([...set].some((c) => c.pairs.has(key))) ids.push(solverId);
    return ids;
  }

  /** Solvers with an open quote-request stream here. */
  get connectedSolvers(): number {
    return this.connections.size;
  }

  /**
   * Asks `solverIds` (each must be serving the pair) and resolves with the answers in time. With
   * `match`, the request offers the best price so far to the operator's chosen solvers, who have
   * `windowMs` (default: the deadline) to match it.
   */
  async ask(ask: QuoteAsk, solverIds: readonly string[], options: { match?: Offer; windowMs?: number } = {}): Promise<FirmAnswer[]> {
    if (solverIds.length === 0) return [];
    if (ask.purpose === 'order' && !options.match && ask.sourceAmount !== undefined) {
      const held = this.standingAnswers(ask, ask.sourceAmount, solverIds);
      if (held.length > 0) return held;
    }
    const id = randomUUID();
    const windowMs = options.windowMs ?? this.deadlineMs;
    const closesAt = this.clock.now() + windowMs;
    const frame =
      `event: quote_request\nid: ${id}\ndata: ${JSON.stringify({
        id,
        purpose: ask.purpose,
        source_asset: ask.from.id,
        destination_asset: ask.to.id,
        source_amount: ask.sourceAmount?.toString() ?? null,
        destination_amount: ask.destinationAmount?.toString() ?? null,
        affiliate_fee: ask.affiliateFeeBips,
        answer_by: new Date(closesAt).toISOString(),
        ...(options.match
          ? { match: { source_amount: options.match.sourceAmount.toString(), destination_amount: options.match.destinationAmount.toString() } }
          : {}),
      })}\n\n`;
    const key = pairKey(ask.from.id, ask.to.id);
    const request: OpenRequest = { ask, matching: options.match !== undefined, askedOf: new Set(), answers: [], closesAt, done: () => {} };
    const finished = new Promise<void>((resolve) => {
      request.done = resolve;
    });
    this.open.set(id, request);
    for (const solverId of solverIds) {
      const connection = [...(this.connections.get(solverId) ?? [])].find((c) => c.pairs.has(key));
      if (!connection) continue;
      request.askedOf.add(solverId);
      connection.send(frame);
    }
    if (request.askedOf.size > 0) {
      const timer = setTimeout(request.done, windowMs);
      await finished;
      clearTimeout(timer);
    }
    this.open.delete(id);
    this.remember(id, request.askedOf);
    for (const solverId of request.askedOf) {
      this.onOutcome(solverId, request.answers.some((a) => a.solverId === solverId) ? 'answered' : 'unanswered');
    }
    return request.answers;
  }

  /** A solver's answer to an open request it was asked; refusals name the field or say why. */
  answer(solverId: string, requestId: string, body: AnswerBody): FirmAnswer {
    const request = this.open.get(requestId);
    if (!request || !request.askedOf.has(solverId)) {
      if (this.closed.get(requestId)?.askedOf.has(solverId)) {
        this.onOutcome(solverId, 'late');
        throw closedError(requestId);
      }
      throw notFound(`no open quote request ${requestId} for this solver`);
    }
    if (this.clock.now() > request.closesAt) {
      this.onOutcome(solverId, 'late');
      throw closedError(requestId, request.closesAt);
    }
    if (request.answers.some((a) => a.solverId === solverId)) throw new AppError('conflict', `quote request ${requestId}: answered already`);
    const { ask } = request;
    const sourceAmount = BigInt(body.source_amount);
    const destinationAmount = BigInt(body.destination_amount);
    if (ask.sourceAmount !== undefined && sourceAmount !== ask.sourceAmount) {
      throw invalid(`source_amount: must be the requested ${ask.sourceAmount}`);
    }
    if (ask.destinationAmount !== undefined && destinationAmount !== ask.destinationAmount) {
      throw invalid(`destination_amount: must be the requested ${ask.destinationAmount}`);
    }
    if (sourceAmount <= 0n) throw invalid('source_amount: must be greater than 0');
    if (destinationAmount <= 0n) throw invalid('destination_amount: must be greater than 0');
    const now = unixSeconds(this.clock);
    if (body.expires_at <= now || body.expires_at > now + MAX_ANSWER_SECONDS) {
      throw invalid(`expires_at: must be a unix time in seconds after now and at most ${MAX_ANSWER_SECONDS} s ahead`);
    }
    const answer: FirmAnswer = { solverId, sourceAmount, destinationAmount, expiresAt: body.expires_at };
    request.answers.push(answer);
    if (!request.matching) this.stand(ask, answer);
    if (request.answers.length === request.askedOf.size) request.done();
    return answer;
  }

  /** The standing answers of `solverIds` for what an order names, those not within the margin of their expiry. */
  standingAnswers(ask: QuoteAsk, sourceAmount: bigint, solverIds: readonly string[]): FirmAnswer[] {
    const answers = this.standing.get(standingKey(ask, sourceAmount));
    if (!answers) return [];
    const until = unixSeconds(this.clock) + STANDING_MARGIN_SECONDS;
    const held: FirmAnswer[] = [];
    for (const [solverId, answer] of answers) {
      if (answer.expiresAt <= until) answers.delete(solverId);
      else if (solverIds.includes(solverId)) held.push(answer);
    }
    return held;
  }

  private stand(ask: QuoteAsk, answer: FirmAnswer): void {
    const key = standingKey(ask, answer.sourceAmount);
    const answers = this.standing.get(key) ?? new Map<string, FirmAnswer>();
    this.standing.delete(key);
    this.standing.set(key, answers.set(answer.solverId, answer));
    if (this.standing.size > MAX_STANDING_ASKS) this.standing.delete(this.standing.keys().next().value!);
  }

  private remember(id: string, askedOf: ReadonlySet<string>): void {
    const now = this.clock.now();
    this.closed.set(id, { at: now, askedOf });
    for (const [closedId, { at }] of this.closed) {
      if (now - at < CLOSED_MEMORY_MS) break;
      this.closed.delete(closedId);
    }
  }
}

function closedError(requestId: string, closedAt?: number): AppError {
  const when = closedAt === undefined ? '' : ` at ${new Date(closedAt).toISOString()}`;
  return new AppError('quote_closed', `quote request ${requestId} closed${when}: answers are taken until its answer_by, and until every solver asked has answered`);
}
