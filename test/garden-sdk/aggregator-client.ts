// A client of Garden's Aggregator API written from its document alone (garden-docs
// api-reference/openapi-v3.yaml, garden-aggregator 3.0.0, the version with /v3 paths): the types are the
// document's schemas, every listed value treated as open, amounts as strings.

export interface Step {
  id: string;
  kind: string;
  action: string;
  description?: string;
  deposit?: { chain: string; address: string; amount: string; memo?: string };
  data?: { chain: string } & Record<string, unknown>;
}
export interface Fee { type: string; asset: string; amount: string; amount_usd?: string }
export interface ProviderError { provider: string; code: string; message: string }
export interface Quote {
  id: string; provider: string; created_at: string; deposit_by: string; sell_asset: string; sell_amount: string; max_sell_amount?: string;
  buy_asset: string; buy_amount: string; min_buy_amount: string; estimated_seconds?: number; steps: Step[]; fees: Fee[];
}
export interface Order {
  id: string; provider: string; state: string; created_at: string; updated_at: string; sell_asset: string; sell_amount: string;
  buy_asset: string; buy_amount: string; min_buy_amount: string; deposits: Array<{ tx_hash: string; amount?: string; at: string }>;
  received: { amount: string; tx: string } | null; steps: Step[]; fees: Fee[]; warnings: Array<{ code: string; message: string }>;
  failure?: { code: string; message: string; refund_failed: boolean }; last_verified_at: string;
}
export interface Estimate {
  provider: string; sell_asset: string; sell_amount: string; max_sell_amount?: string; buy_asset: string; buy_amount: string;
  min_buy_amount: string; estimated_seconds?: number; fees: Fee[]; warnings: Array<{ code: string; message: string }>;
}
export interface Registry {
  updated_at: string;
  chains: Array<{
    id: string; name: string; vm_type: string; chain_id?: string; explorer_url: string; logo_url: string | null; disabled: boolean;
    assets: Array<{ id: string; token: { type: string; address?: string }; symbol: string; name: string; decimals: number; logo_url: string | null; disabled: boolean }>;
  }>;
}
export interface QuoteRequest {
  sell_asset: string; buy_asset: string; amount: string; trade_type: string; sell_address: string; buy_address: string;
  slippage_bps?: number; allow_providers?: string[]; exclude_providers?: string[];
}

/** `{error: {code, message, retryable}}`, as an exception. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly retryable: boolean, readonly headers: Headers) {
    super(`${status} ${code}: ${message}`);
  }
}

export class AggregatorClient {
  constructor(private readonly baseUrl: string, private readonly appId?: string) {}

  private async call<T>(method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ body: T; headers: Headers }> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(this.appId ? { 'garden-app-id': this.appId } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = (await res.json()) as any;
    if (!res.ok) {
      const e = body?.error;
      if (typeof e !== 'object' || typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.retryable !== 'boolean') {
        throw new Error(`${method} ${path}: ${res.status} without the document's Error shape: ${JSON.stringify(body)}`);
      }
      throw new ApiError(res.status, e.code, e.message, e.retryable, res.headers);
    }
    return { body: body as T, headers: res.headers };
  }

  registry() {
    return this.call<Registry>('GET', '/v3/registry');
  }

  routes(q: { sell_asset?: string; buy_asset?: string }) {
    return this.call<{ updated_at: string; routes: Array<{ sell_asset: string; buy_asset: string; min_sell_amount?: string; max_sell_amount?: string }> }>(
      'GET',
      `/v3/routes?${new URLSearchParams(q as Record<string, string>).toString()}`,
    );
  }

  estimate(q: { sell_asset: string; buy_asset: string; amount: string; trade_type: string; slippage_bps?: number }) {
    const params = new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)]));
    return this.call<{ estimates: Estimate[]; provider_errors: ProviderError[] }>('GET', `/v3/estimate?${params.toString()}`);
  }

  quote(request: QuoteRequest, idempotencyKey: string) {
    return this.call<{ quotes: Quote[]; provider_errors: ProviderError[] }>('POST', '/v3/quote', { body: request, headers: { 'Idempotency-Key': idempotencyKey } });
  }

  async order(id: string, wait?: number): Promise<Order> {
    return (await this.call<Order>('GET', `/v3/orders/${encodeURIComponent(id)}${wait !== undefined ? `?wait=${wait}` : ''}`)).body;
  }

  orders(q: { tx_hash?: string; cursor?: string; limit?: number } = {}) {
    const params = new URLSearchParams(Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)]));
    return this.call<{ orders: Order[]; next_cursor?: string }>('GET', `/v3/orders${params.size > 0 ? `?${params.toString()}` : ''}`);
  }

  async submit(id: string, txHash: string): Promise<Order> {
    return (await this.call<Order>('POST', `/v3/orders/${encodeURIComponent(id)}/submit`, { body: { tx_hash: txHash } })).body;
  }

  /** After a `signature` step: its kind selects the field sent to submit. */
  async submitSignature(id: string, signature: string): Promise<Order> {
    return (await this.call<Order>('POST', `/v3/orders/${encodeURIComponent(id)}/submit`, { body: { signature } })).body;
  }

  /** Long-polls the order (25 s at a time, as the document allows) until it is terminal or `until` holds. */
  async follow(id: string, until: (order: Order) => boolean, timeoutMs: number): Promise<Order> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const order = await this.order(id, 25);
      if (until(order) || ['completed', 'refunded', 'failed'].includes(order.state)) return order;
      if (Date.now() > end) throw new Error(`${id}: still ${order.state} after ${timeoutMs} ms: ${JSON.stringify(order)}`);
    }
  }
}
