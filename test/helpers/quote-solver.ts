// A registered solver's quoting side, as a market maker would write it: it follows its quote-request
// stream and answers each request over HTTP with the price `price` gives (or not at all). For tests
// and benches.
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Db } from '../../src/store/database.ts';
import { registerSolver, solverAddressMessage } from '../../src/store/solver-registry.ts';
import { SseClient } from './sse.ts';
import type { QuoteRequestEvent } from '../../src/solver-process/quote-answerer.ts';

export type { QuoteRequestEvent };

/** The amount the solver offers for the other side (and after how long it answers); undefined: no answer. */
export type Pricer = (request: QuoteRequestEvent) => { amount: bigint; delayMs?: number; expiresInSeconds?: number } | undefined;

export interface SentAnswer {
  requestId: string;
  status: number;
  body: Record<string, any>;
}

export class QuotingSolver {
  readonly requests: QuoteRequestEvent[] = [];
  readonly answers: SentAnswer[] = [];
  private pending = new Set<Promise<void>>();

  private constructor(
    private readonly stream: SseClient,
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  /** Opens the solver's quote-request stream; resolves once it is `ready` (throws on a refusal, with its body). */
  static async connect(baseUrl: string, key: string, price: Pricer): Promise<QuotingSolver> {
    const holder: { solver?: QuotingSolver } = {};
    const stream = await SseClient.open(`${baseUrl}/solver/v1/quote-requests`, { 'solver-key': key }, (event) => {
      if (event.event === 'quote_request') holder.solver?.onRequest(JSON.parse(event.data) as QuoteRequestEvent, price);
    });
    if (stream.response.statusCode !== 200) throw new Error(`quote-request stream refused: ${stream.response.statusCode} ${await stream.text()}`);
    const solver = (holder.solver = new QuotingSolver(stream, baseUrl, key));
    await stream.until(() => stream.events.some((e) => e.event === 'ready'), 10_000, 'the ready event');
    return solver;
  }

  /** Answers already sent have had their responses. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  get closed(): boolean {
    return this.stream.closed;
  }

  close(): void {
    this.stream.close();
  }

  private onRequest(request: QuoteRequestEvent, price: Pricer): void {
    this.requests.push(request);
    const offer = price(request);
    if (!offer) return;
    const send = async () => {
      if (offer.delayMs) await new Promise((resolve) => setTimeout(resolve, offer.delayMs));
      const body = {
        source_amount: request.source_amount ?? offer.amount.toString(),
        destination_amount: request.destination_amount ?? offer.amount.toString(),
        expires_at: Math.floor(Date.now() / 1000) + (offer.expiresInSeconds ?? 30),
      };
      const res = await fetch(`${this.baseUrl}/solver/v1/quote-requests/${request.id}`, {
        method: 'POST',
        headers: { 'solver-key': this.key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      this.answers.push({ requestId: request.id, status: res.status, body: (await res.json()) as Record<string, any> });
    };
    const sent = send().finally(() => this.pending.delete(sent));
    this.pending.add(sent);
  }
}

/**
 * What an operator and a market maker do to bring a solver in: the operator registers it (in the
 * store, as `hashlock solvers register` does); the solver proves `account` on each chain and registers
 * its pairs over the solver API. Returns its solver key.
 */
export async function registerQuotingSolver(
  db: Db,
  apiUrl: string,
  input: { id: string; account: PrivateKeyAccount; chains: readonly string[]; pairs: ReadonlyArray<readonly [string, string]> },
): Promise<string> {
  const { key } = await registerSolver(db, { id: input.id, name: input.id });
  const call = async (method: string, path: string, body: object) => {
    const res = await fetch(`${apiUrl}${path}`, { method, headers: { 'solver-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  for (const chain of input.chains) {
    const signature = await input.account.signMessage({ message: solverAddressMessage(input.id, chain, input.account.address) });
    await call('PUT', `/solver/v1/addresses/${chain}`, { address: input.account.address, signature });
  }
  await call('PUT', '/solver/v1/pairs', { pairs: input.pairs.map(([from, to]) => ({ source_asset: from, destination_asset: to })) });
  return key;
}
