import type { Registry } from '../chains/registry.ts';
import { AppError, safeErrorText } from '../errors.ts';
import type { Log } from '../log.ts';
import type { Quoter } from '../pricing/quote.ts';
import { TurnBatch } from '../solver/job-batches.ts';
import type { AnswerOutcome, QuoteAnswer, SolverApiClient } from './solver-api-client.ts';

/** A quote request as the service streams it (docs/api.md "Quote requests and competition"). */
export interface QuoteRequestEvent {
  id: string;
  purpose: 'quote' | 'order';
  source_asset: string;
  destination_asset: string;
  source_amount: string | null;
  destination_amount: string | null;
  affiliate_fee: number;
  answer_by: string;
  /** The best price so far, when the operator's match-first window offers it to this solver. */
  match?: { source_amount: string; destination_amount: string };
}

/** Why a solver does not answer, every day: not worth a log line each. */
const QUIET_REFUSALS: ReadonlySet<string> = new Set(['amount_out_of_range', 'insufficient_liquidity', 'no_route']);

/** How long an answer stands (the price is firm until then). */
const ANSWER_VALID_SECONDS = 30;

/**
 * `hashlock solver`'s side of the quote auction: each request is priced with the solver's own
 * strategies and prices, within its ranges and its liquidity on chain, and answered at once; what it
 * cannot fill it leaves unanswered. Answers priced in the same turn of the event loop (a burst of
 * requests arrives in one read of the stream) go to the service in one call.
 */
export class QuoteAnswerer {
  answered = 0;
  declined = 0;
  private readonly answers: TurnBatch<QuoteAnswer, AnswerOutcome>;

  constructor(
    api: SolverApiClient,
    private readonly quoter: Quoter,
    private readonly registry: Registry,
    private readonly log: Log,
  ) {
    this.answers = new TurnBatch((answers) => api.answerAll(answers));
  }

  /** Answers one request; resolves once the answer was sent (or none is given); never throws (the stream goes on). */
  async handle(data: string): Promise<void> {
    let request: QuoteRequestEvent;
    try {
      request = JSON.parse(data) as QuoteRequestEvent;
    } catch {
      this.log.warn({ data: data.slice(0, 200) }, 'ignored a quote request that is not JSON');
      return;
    }
    const from = this.registry.asset(request.source_asset);
    const to = this.registry.asset(request.destination_asset);
    if (!from || !to) {
      this.declined++;
      return;
    }
    let best;
    try {
      [best] = await this.quoter.quote({
        from,
        to,
        ...(request.source_amount !== null ? { fromAmount: BigInt(request.source_amount) } : { toAmount: BigInt(request.destination_amount!) }),
        affiliateFeeBips: request.affiliate_fee,
      });
    } catch (err) {
      // Out of range, short of liquidity or without a price: no answer. Anything else is worth a line.
      this.declined++;
      if (!(err instanceof AppError) || !QUIET_REFUSALS.has(err.code)) this.log.warn({ request: request.id, error: safeErrorText(err) }, 'quote request not answered');
      return;
    }
    if (!best) return;
    try {
      const outcome = await this.answers.add({
        request_id: request.id,
        source_amount: best.sourceAmount.toString(),
        destination_amount: best.destinationAmount.toString(),
        expires_at: Math.floor(Date.now() / 1000) + ANSWER_VALID_SECONDS,
      });
      if (outcome.accepted) this.answered++;
      else {
        this.declined++;
        this.log.warn({ request: request.id, code: outcome.code, error: outcome.error }, 'quote answer refused');
      }
    } catch (err) {
      this.declined++;
      this.log.warn({ request: request.id, error: safeErrorText(err) }, 'quote answer not sent');
    }
  }
}
