// The clients: each starts its swap at its planned moment and sees it through as a wallet would,
// through either instance (a load balancer's choice), retrying what a fault refused: quote, create,
// sign and initiate, redeem when it keeps the secret, refund once the source has expired. Every HTTP
// answer is recorded for the checker.
import { createHash, randomBytes } from 'node:crypto';
import { devAccount } from '../src/localnet/accounts.ts';
import { signGaslessInitiate, type InitiateTypedData } from '../test/helpers/gasless.ts';
import type { PlannedSwap, Route } from './schedule.ts';
import { MAKER_ID, type ChaosWorld } from './world.ts';

export interface Answer {
  at: number;
  instance: string;
  method: string;
  path: string;
  /** 0: no answer (the instance was down or the connection dropped). */
  status: number;
  code?: string;
}

export interface SideRecord {
  chain: string;
  asset: string;
  swapId: string;
  amount: bigint;
  owner: string;
}

export interface SwapRecord {
  plan: PlannedSwap;
  orderId?: string;
  solverId?: string;
  source?: SideRecord;
  destination?: SideRecord;
  secretHash?: string;
  /** The client's own initiate on Solana (its fee is the user's). */
  initiateTx?: string;
  /** The client paid its source, or the service accepted its gasless initiate. */
  initiated: boolean;
  /** The statuses the client saw, in order, each once. */
  statuses: string[];
  outcome: 'completed' | 'refunded' | 'unsettled' | 'not started';
  notes: string[];
}

/** What each route swaps: assets, owners, the source amount. */
function routeTerms(w: ChaosWorld, route: Route, reverse: boolean) {
  const user = devAccount('user').address;
  const [evmA, evmB] = reverse ? ['arbitrum_localnet', 'ethereum_localnet'] : ['ethereum_localnet', 'arbitrum_localnet'];
  switch (route) {
    case 'evm':
      return { from: `${evmA}:wbtc`, to: `${evmB}:wbtc`, fromOwner: user, toOwner: user, amount: 100_000n };
    case 'evm-ltc':
      return { from: `${evmA}:wbtc`, to: 'litecoin_localnet:ltc', fromOwner: user, toOwner: w.ltc.user, amount: 50_000n };
    case 'ltc-evm':
      return { from: 'litecoin_localnet:ltc', to: `${evmB}:wbtc`, fromOwner: w.ltc.user, toOwner: user, amount: 50_000_000n };
    case 'sol-evm':
      return { from: 'solana_localnet:sol', to: `${evmB}:wbtc`, fromOwner: w.sol.user.address, toOwner: user, amount: 200_000_000n };
    case 'tron-evm':
      return { from: 'tron_localnet:usdt', to: `${evmB}:wbtc`, fromOwner: w.tron.user, toOwner: user, amount: 10_000_000n };
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Json {
  status: number;
  body: { error?: string; code?: string; result?: unknown };
}

/** The API through either instance, every answer recorded. */
export class Clients {
  readonly answers: Answer[] = [];
  constructor(private readonly w: ChaosWorld) {}

  /** One call through `instance` (a random one by default). */
  async request(method: string, path: string, body?: object, instance?: 0 | 1): Promise<Json | undefined> {
    const i = instance ?? (Math.random() < 0.5 ? 0 : 1);
    const at = Date.now();
    try {
      const res = await fetch(`${this.w.instances[i].api}${path}`, {
        method,
        headers: { 'service-app-id': this.w.appKey, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(60_000),
      });
      const parsed = (await res.json().catch(() => ({}))) as Json['body'];
      this.answers.push({ at, instance: i === 0 ? 'A' : 'B', method, path: path.split('?')[0]!, status: res.status, ...(parsed.code ? { code: parsed.code } : {}) });
      return { status: res.status, body: parsed };
    } catch {
      this.answers.push({ at, instance: i === 0 ? 'A' : 'B', method, path: path.split('?')[0]!, status: 0 });
      return undefined;
    }
  }

  /** Asks until an answer below 500 (a fault's 503s and lost connections are waited out), or `deadline`. */
  async until(method: string, path: string, body: object | undefined, deadline: number, instance?: 0 | 1): Promise<Json> {
    for (;;) {
      const res = await this.request(method, path, body, instance);
      if (res && res.status < 500) return res;
      if (Date.now() > deadline) throw new Error(`${method} ${path}: ${res ? `${res.status} ${res.body.error}` : 'no answer'} until the deadline`);
      await pause(1_000);
    }
  }
}

/**
 * One client's swap from its start to completed or refunded, or to `deadline`. It never throws: what
 * went wrong is in the record's notes, and the checker reads the chains anyway.
 */
export async function runSwap(w: ChaosWorld, api: Clients, plan: PlannedSwap, deadline: number, log: (line: string) => void): Promise<SwapRecord> {
  const record: SwapRecord = { plan, initiated: false, statuses: [], outcome: 'not started', notes: [] };
  const terms = routeTerms(w, plan.route, plan.reverse);
  const secret = plan.clientSecret ? randomBytes(32) : undefined;
  const secretHash = secret ? createHash('sha256').update(secret).digest('hex') : undefined;
  try {
    // The quote, and the order at its price through the same instance (a sticky session): the maker's
    // if the client wants it and it quotes, else the best. A refused order is quoted again, up to 5 times.
    const quotePath = `/v2/quote?from=${terms.from}&to=${terms.to}&from_amount=${terms.amount}`;
    let created: Json | undefined;
    let wantMaker = plan.maker;
    for (let attempt = 0; attempt < 5 && !created; attempt++) {
      const instance = Math.random() < 0.5 ? 0 : 1;
      let quotes: Array<{ solver_id: string; destination: { amount: string } }> = [];
      for (const end = Math.min(deadline, Date.now() + 120_000); ; await pause(1_000)) {
        const res = await api.until('GET', quotePath, undefined, end, instance);
        if (res.status === 200) {
          quotes = res.body.result as typeof quotes;
          break;
        }
        if (Date.now() > end) throw new Error(`no quote: ${res.status} ${res.body.error}`);
      }
      const quote = (wantMaker && quotes.find((q) => q.solver_id === MAKER_ID)) || quotes[0]!;
      const res = await api.until(
        'POST',
        '/v2/orders',
        {
          source: { asset: terms.from, owner: terms.fromOwner, amount: terms.amount.toString() },
          destination: { asset: terms.to, owner: terms.toOwner, amount: quote.destination.amount },
          nonce: randomBytes(10).toString('hex'),
          solver_id: quote.solver_id,
          ...(secretHash ? { secret_hash: secretHash } : {}),
        },
        deadline,
        instance,
      );
      if (res.status === 201 || res.status === 200) created = res;
      else {
        record.notes.push(`create (${quote.solver_id === MAKER_ID ? 'the maker' : 'the service'} via ${instance === 0 ? 'A' : 'B'}): ${res.status} ${res.body.error}`);
        if (quote.solver_id === MAKER_ID) wantMaker = false;
        await pause(1_000);
      }
    }
    if (!created) throw new Error(`create: ${record.notes.at(-1)}`);
    const result = created.body.result as { order_id: string; typed_data?: InitiateTypedData; to?: string; versioned_tx?: string };
    record.orderId = result.order_id;
    const order = (await api.until('GET', `/v2/orders/${result.order_id}`, undefined, deadline)).body.result as Order;
    record.solverId = order.solver_id;
    record.secretHash = order.source_swap.secret_hash;
    const side = (s: Order['source_swap'], asset: string, owner: string): SideRecord => ({ chain: s.chain, asset, swapId: s.swap_id, amount: BigInt(s.amount), owner });
    record.source = side(order.source_swap, terms.from, terms.fromOwner);
    record.destination = side(order.destination_swap, terms.to, terms.toOwner);

    // The client's initiate: gasless on EVM and Tron, its own payment on Litecoin and Solana.
    if (plan.route === 'ltc-evm') {
      await w.ltc.pay(result.to!, terms.amount);
      record.initiated = true;
    } else if (plan.route === 'sol-evm') {
      record.initiateTx = await w.sol.send(result.versioned_tx!);
      record.initiated = true;
    } else {
      const signature = await signGaslessInitiate(devAccount('user'), result.typed_data!);
      const res = await api.until('PATCH', `/v2/orders/${result.order_id}?action=initiate`, { signature }, deadline);
      if (res.status >= 300) record.notes.push(`initiate: ${res.status} ${res.body.error}`);
      else record.initiated = true;
    }

    let redeemAskedAt = 0;
    let refundAskedAt = 0;
    for (;;) {
      const res = await api.request('GET', `/v2/orders/${result.order_id}`);
      const status = res?.status === 200 ? (res.body.result as Order).status : undefined;
      if (status && record.statuses.at(-1) !== status) record.statuses.push(status);
      if (status === 'completed' || status === 'refunded') {
        record.outcome = status;
        return record;
      }
      if (status === 'awaiting_redeem' && secret && !plan.abandon && Date.now() - redeemAskedAt > 30_000) {
        const asked = await api.request('PATCH', `/v2/orders/${result.order_id}?action=redeem`, { secret: secret.toString('hex') });
        if (asked && asked.status < 300) redeemAskedAt = Date.now();
        else if (asked && asked.status < 500) record.notes.push(`redeem: ${asked.status} ${asked.body.error}`);
      }
      if (status === 'awaiting_refund' && Date.now() - refundAskedAt > 10_000) {
        const asked = await api.request('PATCH', `/v2/orders/${result.order_id}?action=refund`, {});
        if (asked && asked.status < 300) refundAskedAt = Date.now();
        else if (asked && asked.status < 500 && !record.notes.some((n) => n.startsWith('refund:'))) record.notes.push(`refund: ${asked.status} ${asked.body.error}`);
      }
      if (Date.now() > deadline) {
        record.outcome = 'unsettled';
        return record;
      }
      await pause(2_000);
    }
  } catch (err) {
    record.notes.push(String(err).slice(0, 300));
    log(`swap #${plan.index} (${plan.route}): ${String(err).slice(0, 300)}`);
    if (record.orderId) record.outcome = 'unsettled';
    return record;
  }
}

interface Order {
  order_id: string;
  status: string;
  solver_id: string;
  source_swap: { chain: string; swap_id: string; amount: string; secret_hash: string };
  destination_swap: { chain: string; swap_id: string; amount: string; secret_hash: string };
}
