// The checker: what the chains say happened to each swap (chains.ts reads it), the parties' balances
// before and after, the broadcast deadlines the solvers stored, and every HTTP answer the clients got,
// held against the rules below. It is a pure function of those facts, so a test can plant a violation.
//
// The rules, per swap (S: its source HTLC, D: its destination HTLC; "funded" is an initiate on chain):
//  1. once: no HTLC is funded, redeemed or refunded more than once, and none is both redeemed and refunded;
//  2. terms: S is funded with the order's source amount, D with its destination amount;
//  3. order: D is funded only once S is (rule 1 of docs/safety.md), never before S's funding block;
//  4. rule 2: D's funding block is no later than the broadcast deadline its solver stored for that
//     funding (relayer_jobs.broadcast_by) plus one destination block and 2 s of clock skew, unless a
//     reorg of D's chain re-mined it; a D funding with no stored deadline is a violation too;
//  5. settled: every swap ends completed (S and D redeemed) or refunded (S refunded, D never funded or
//     refunded); an HTLC still holding funds at the end is a violation; a swap whose client never got
//     to initiate (its initiate refused until it gave up) has nothing at stake and is only counted;
//  6. consistent: D redeemed implies S redeemed, or S not refunded and still before its timelock
//     (the solver can still take it); S refunded implies D not redeemed; S redeemed implies D redeemed
//     (the solver can only have the secret from D);
//  7. balances: each party's balance moved by exactly what the chain facts say the swaps moved (the
//     user: minus each funded source, plus each redeemed destination and refunded source, less only
//     the fees of transactions it paid for itself: its Solana initiates, and the fee a Litecoin spend
//     to it takes from the HTLC's amount); a solver's coins on Litecoin and Solana within a bound of its
//     own fees;
//  8. HTTP: no answer 5xx other than 503, and a 503 only while a fault lasts (or within a grace after).

export interface ChainTx {
  tx: string;
  /** Block time, ms; undefined while unmined. */
  at?: number;
  amount?: bigint;
  /** A Litecoin spend: what it pays to the swap's user, and its fee (taken from the HTLC's amount). */
  toUser?: bigint;
  fee?: bigint;
}

export interface HtlcFacts {
  initiates: ChainTx[];
  redeems: ChainTx[];
  refunds: ChainTx[];
}

export interface SideFacts {
  chain: string;
  /** chain:symbol, as the balances name it. */
  asset: string;
  swapId: string;
  amount: bigint;
  /** When its timelock runs out, ms (from its funding block; undefined when unfunded). */
  expiresAt?: number;
  htlc: HtlcFacts;
}

export interface SwapFacts {
  index: number;
  family: string;
  orderId: string;
  /** 'solver' (the service's own) or 'maker'. */
  solver: string;
  source: SideFacts;
  destination: SideFacts;
  /** The destination funding's broadcast deadline as its solver stored it, ms. */
  broadcastBy?: number;
  /** The client's own initiate fee (Solana), paid by the user. */
  userInitiateFee?: bigint;
  /** The client paid its source, or the service accepted its gasless initiate. */
  clientInitiated: boolean;
  /** What the client saw last. */
  clientOutcome: string;
}

export interface BalanceReading {
  party: string;
  asset: string;
  before: bigint;
  after: bigint;
}

export interface AnswerFact {
  at: number;
  status: number;
  method: string;
  path: string;
  code?: string;
}

export interface Observation {
  /** ms: when the facts were read. */
  now: number;
  swaps: SwapFacts[];
  balances: BalanceReading[];
  answers: AnswerFact[];
  /** When each fault lasted (ms), and its kind and chain; reorgs are instants. */
  faults: Array<{ kind: string; node?: string; from: number; to: number }>;
  /** Block time of each chain, ms. */
  blockMs: Record<string, number>;
}

export interface Violation {
  rule: string;
  family: string;
  swap?: number;
  detail: string;
}

const GRACE_MS = 30_000;
/** The most a solver's own transaction costs in fees: litoshis on Litecoin, lamports on Solana. */
const FEE_BOUND: Record<string, bigint> = { litecoin_localnet: 100_000n, solana_localnet: 100_000n };

export const outcomeOf = (s: SwapFacts): 'completed' | 'refunded' | 'never funded' | 'unsettled' => {
  const S = s.source.htlc;
  const D = s.destination.htlc;
  if (S.initiates.length === 0 && D.initiates.length === 0 && !s.clientInitiated) return 'never funded';
  if (S.redeems.length > 0 && D.redeems.length > 0) return 'completed';
  if (S.refunds.length > 0 && (D.initiates.length === 0 || D.refunds.length > 0)) return 'refunded';
  return 'unsettled';
};

function swapViolations(s: SwapFacts, o: Observation): Violation[] {
  const out: Violation[] = [];
  const v = (rule: string, detail: string) => out.push({ rule, family: s.family, swap: s.index, detail: `${s.orderId}: ${detail}` });
  const S = s.source.htlc;
  const D = s.destination.htlc;
  for (const [name, side] of [['source', s.source], ['destination', s.destination]] as const) {
    for (const kind of ['initiates', 'redeems', 'refunds'] as const) {
      if (side.htlc[kind].length > 1) v('once', `${name} ${kind.slice(0, -1)}d ${side.htlc[kind].length} times (${side.htlc[kind].map((t) => t.tx).join(', ')})`);
    }
    if (side.htlc.redeems.length > 0 && side.htlc.refunds.length > 0) v('once', `${name} both redeemed and refunded`);
    for (const f of side.htlc.initiates) if (f.amount !== undefined && f.amount !== side.amount) v('terms', `${name} funded with ${f.amount}, the order says ${side.amount}`);
  }
  const sFunded = S.initiates[0];
  const dFunded = D.initiates[0];
  if (dFunded && !sFunded) v('order', 'destination funded, source never');
  if (dFunded?.at !== undefined && sFunded?.at !== undefined && dFunded.at < sFunded.at - 1_000) v('order', `destination funded ${(sFunded.at - dFunded.at) / 1000} s before the source`);
  const by = s.broadcastBy;
  if (dFunded) {
    if (by === undefined) v('rule 2', 'destination funded, but its solver stored no broadcast deadline');
    else if (dFunded.at !== undefined) {
      const fundedAt = dFunded.at;
      const late = fundedAt - by - (o.blockMs[s.destination.chain] ?? 1_000) - 2_000;
      const reorged = o.faults.some((f) => f.kind === 'reorg' && CHAIN_OF[f.node ?? ''] === s.destination.chain && f.from >= by - 60_000 && f.from <= fundedAt);
      if (late > 0 && !reorged) v('rule 2', `destination funded in a block ${((fundedAt - by) / 1000).toFixed(1)} s after its broadcast deadline ${new Date(by).toISOString()}`);
    }
  }
  const outcome = outcomeOf(s);
  if (outcome === 'unsettled') {
    const stillHeld = D.redeems.length > 0 && S.redeems.length === 0 && S.refunds.length === 0 && s.source.expiresAt !== undefined && o.now < s.source.expiresAt;
    v('settled', `neither completed nor refunded: source ${describe(S)}, destination ${describe(D)}${stillHeld ? ' (the solver may still redeem its source)' : ''}; the client saw ${s.clientOutcome}`);
  }
  if (D.redeems.length > 0 && S.refunds.length > 0) v('consistent', 'destination redeemed and source refunded: the solver lost the swap');
  if (D.redeems.length > 0 && S.redeems.length === 0 && S.refunds.length === 0 && s.source.expiresAt !== undefined && o.now >= s.source.expiresAt) {
    v('consistent', 'destination redeemed, source neither redeemed nor refunded past its timelock');
  }
  if (S.redeems.length > 0 && D.redeems.length === 0) v('consistent', 'source redeemed without a destination redeem: the user lost the swap');
  return out;
}

const describe = (h: HtlcFacts) => (h.initiates.length === 0 ? 'unfunded' : h.redeems.length > 0 ? 'redeemed' : h.refunds.length > 0 ? 'refunded' : 'funded, unspent');

/** The proxy names the faults use, by chain key. */
export const CHAIN_OF: Record<string, string> = { eth: 'ethereum_localnet', arb: 'arbitrum_localnet', ltc: 'litecoin_localnet', sol: 'solana_localnet', tron: 'tron_localnet' };

/** What the chain facts say each party's balance of each asset moved by: exact, less `allowance` at most. */
export function ledger(swaps: SwapFacts[]): Map<string, { expected: bigint; allowance: bigint }> {
  const book = new Map<string, { expected: bigint; allowance: bigint }>();
  const add = (party: string, asset: string, amount: bigint, allowance = 0n) => {
    const key = `${party} ${asset}`;
    const e = book.get(key) ?? { expected: 0n, allowance: 0n };
    book.set(key, { expected: e.expected + amount, allowance: e.allowance + allowance });
  };
  for (const s of swaps) {
    const { source: S, destination: D } = s;
    const coin = (side: SideFacts) => FEE_BOUND[side.chain] !== undefined;
    // The user's Litecoin source is paid from its node wallet, not its address: that side is not its balance here.
    const userPays = S.chain !== 'litecoin_localnet';
    if (S.htlc.initiates.length > 0 && userPays) add('user', S.asset, -S.amount * BigInt(S.htlc.initiates.length) - (s.userInitiateFee ?? 0n));
    for (const r of S.htlc.redeems) add(s.solver, S.asset, coin(S) ? S.amount - (r.fee ?? 0n) : S.amount, coin(S) && r.fee === undefined ? FEE_BOUND[S.chain]! : 0n);
    for (const r of S.htlc.refunds) add('user', S.asset, r.toUser ?? S.amount);
    for (let i = 0; i < D.htlc.initiates.length; i++) add(s.solver, D.asset, -D.amount, coin(D) ? FEE_BOUND[D.chain]! : 0n);
    for (const r of D.htlc.redeems) add('user', D.asset, r.toUser ?? D.amount);
    for (const r of D.htlc.refunds) add(s.solver, D.asset, coin(D) ? D.amount - (r.fee ?? 0n) : D.amount, coin(D) && r.fee === undefined ? FEE_BOUND[D.chain]! : 0n);
  }
  return book;
}

export function checkInvariants(o: Observation): Violation[] {
  const violations = o.swaps.flatMap((s) => swapViolations(s, o));
  // A Litecoin spend to the user takes its fee from the HTLC's amount, and nothing more.
  for (const s of o.swaps) {
    for (const [side, spends] of [[s.source, s.source.htlc.refunds], [s.destination, s.destination.htlc.redeems]] as const) {
      for (const t of spends) {
        if (t.toUser === undefined) continue;
        const fee = side.amount - t.toUser;
        if (fee < 0n || fee > (FEE_BOUND[side.chain] ?? 0n)) violations.push({ rule: 'balances', family: s.family, swap: s.index, detail: `${s.orderId}: the user got ${t.toUser} of ${side.amount} (fee ${fee})` });
      }
    }
  }
  const book = ledger(o.swaps);
  for (const b of o.balances) {
    const { expected, allowance } = book.get(`${b.party} ${b.asset}`) ?? { expected: 0n, allowance: 0n };
    const moved = b.after - b.before;
    if (moved > expected || moved < expected - allowance) {
      violations.push({ rule: 'balances', family: 'all', detail: `${b.party} ${b.asset}: moved ${moved}, the swaps account for ${expected}${allowance ? ` (less up to ${allowance} in its fees)` : ''}` });
    }
  }
  for (const a of o.answers) {
    if (a.status < 500) continue;
    const during = o.faults.some((f) => a.at >= f.from - 1_000 && a.at <= f.to + GRACE_MS);
    if (a.status !== 503 || !during) violations.push({ rule: 'http', family: 'all', detail: `${a.method} ${a.path} answered ${a.status}${a.code ? ` ${a.code}` : ''} at ${new Date(a.at).toISOString()}${a.status === 503 ? ', no fault lasting' : ''}` });
  }
  return violations;
}
