import type { Registry } from '../chains/registry.ts';
import { AppError, safeErrorText } from '../errors.ts';
import type { Log } from '../log.ts';
import type { Quoter } from '../pricing/quote.ts';
import type { SolverApiClient } from './solver-api-client.ts';

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
 * cannot fill it leaves unanswered.
 */
export class QuoteAnswerer {
  answered = 0;
  declined = 0;

  constructor(
    private readonly api: SolverApiClient,
    private readonly quoter: Quoter,
    private readonly registry: Registry,
    private readonly log: Log,
  ) {}

  /** Answers one request; never throws (the stream goes on). */
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
    try {
      const [best] = await this.quoter.quote({
        from,
        to,
        ...(request.source_amount !== null ? { fromAmount: BigInt(request.source_amount) } : { toAmount: BigInt(request.destination_amount!) }),
        affiliateFeeBips: request.affiliate_fee,
      });
      if (!best) return;
      await this.api.answer(request.id, {
        source_amount: best.sourceAmount.toString(),
        destination_amount: best.destinationAmount.toString(),
        expires_at: Math.floor(Date.now() / 1000) + ANSWER_VALID_SECONDS,
      });
      this.answered++;
    } catch (err) {
      // Out of range, short of liquidity or without a price: no answer. Anything else is worth a line.
      this.declined++;
      if (!(err instanceof AppError) || !QUIET_REFUSALS.has(err.code)) this.log.warn({ request: request.id, error: safeErrorText(err) }, 'quote request not answered');
    }
  }
}
