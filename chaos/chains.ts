// What the chains themselves say of each swap, for the checker: the HTLC contracts' events on the
// anvils and on Tron's anvil, the payments to and spends of each Litecoin HTLC address, the Solana
// programs' events of each swap account; the parties' balances; and the broadcast deadlines the
// service's and the maker's databases stored for the destination fundings.
import { createHash } from 'node:crypto';
import { getAddressDecoder, type Address as SolanaAddress } from '@solana/kit';
import { createPublicClient, erc20Abi, http, parseEventLogs, type Address, type PublicClient } from 'viem';
import pg from 'pg';
import { satoshis, type RpcBlock, type RpcTransaction } from '../src/chains/bitcoin/chain-data.ts';
import { scanUtxoSet } from '../src/chains/bitcoin/utxo-scan.ts';
import { htlcPrograms, swapEventsOfTransaction } from '../src/chains/solana/htlc-events.ts';
import { solanaRpc } from '../src/chains/solana/rpc.ts';
import { HTLC_EVENTS } from '../src/chains/solidity-htlc/htlc-events.ts';
import { tronToEvmHex } from '../src/chains/tron/address.ts';
import { TronHtlcReader } from '../src/chains/tron/htlc-reads.ts';
import { devAccount } from '../src/localnet/accounts.ts';
import { openStore } from '../src/store/database.ts';
import type { BlockClock } from './block-clock.ts';
import type { SwapRecord } from './clients.ts';
import type { BalanceReading, ChainTx, HtlcFacts, SideFacts, SwapFacts } from './invariants.ts';
import type { ChaosWorld } from './world.ts';

/** Where each chain stood when the swaps began: facts are read from there on. */
export interface ChainMark {
  eth: bigint;
  arb: bigint;
  tron: bigint;
  ltc: number;
  balances: Map<string, bigint>;
}

const empty = (): HtlcFacts => ({ initiates: [], redeems: [], refunds: [] });

/** Every HTLC event of one contract since `fromBlock`, by order id (hex, no 0x), with block times. */
async function evmFacts(clock: BlockClock, chain: string, client: PublicClient, htlc: Address, fromBlock: bigint): Promise<Map<string, HtlcFacts>> {
  const logs = parseEventLogs({ abi: HTLC_EVENTS, logs: await client.getLogs({ address: htlc, fromBlock, toBlock: 'latest' }) });
  const times = new Map<bigint, number>();
  const out = new Map<string, HtlcFacts>();
  for (const e of logs) {
    if (!times.has(e.blockNumber)) times.set(e.blockNumber, clock.timeOf(chain, e.blockHash) ?? Number((await client.getBlock({ blockNumber: e.blockNumber })).timestamp) * 1000);
    const id = e.args.orderID.slice(2).toLowerCase();
    const facts = out.get(id) ?? empty();
    const tx: ChainTx = { tx: e.transactionHash, at: times.get(e.blockNumber)! };
    if (e.eventName === 'Initiated') facts.initiates.push({ ...tx, amount: e.args.amount });
    else if (e.eventName === 'Redeemed') facts.redeems.push(tx);
    else facts.refunds.push(tx);
    out.set(id, facts);
  }
  return out;
}

type Output = RpcTransaction['vout'][number] & { scriptPubKey?: { address?: string; addresses?: string[] } };
const addressOf = (o: Output) => o.scriptPubKey?.address ?? o.scriptPubKey?.addresses?.[0];

/**
 * Each Litecoin HTLC address's payments and spends since `fromHeight` (mempool included, unmined):
 * a spend whose witness holds the preimage of the swap's secret hash is a redeem, any other a refund.
 */
async function litecoinFacts(w: ChaosWorld, clock: BlockClock, fromHeight: number, swaps: Array<{ address: string; secretHash: string; user: string }>): Promise<Map<string, HtlcFacts>> {
  const rpc = w.ltc.node.rpc;
  const txs: Array<{ tx: RpcTransaction; at?: number }> = [];
  for (let h = fromHeight, tip = await rpc.getBlockCount(); h <= tip; h++) {
    const block = await rpc.call<RpcBlock>('getblock', [await rpc.getBlockHash(h), 2]);
    for (const tx of block.tx) txs.push({ tx, at: clock.timeOf('litecoin_localnet', block.hash) ?? block.time * 1000 });
  }
  for (const txid of await rpc.call<string[]>('getrawmempool')) txs.push({ tx: await rpc.call<RpcTransaction>('getrawtransaction', [txid, true]) });
  const bySwap = new Map(swaps.map((s) => [s.address, s]));
  const out = new Map<string, HtlcFacts>(swaps.map((s) => [s.address, empty()]));
  const paid = new Map<string, { address: string; value: bigint }>();
  for (const { tx, at } of txs) {
    for (const o of tx.vout as Output[]) {
      const to = addressOf(o);
      if (to === undefined || !bySwap.has(to)) continue;
      out.get(to)!.initiates.push({ tx: tx.txid, at, amount: satoshis(o.value) });
      paid.set(`${tx.txid}:${o.n}`, { address: to, value: satoshis(o.value) });
    }
  }
  for (const { tx, at } of txs) {
    const spent = tx.vin.map((i) => paid.get(`${i.txid}:${i.vout}`)).filter((p) => p !== undefined);
    if (spent.length === 0) continue;
    const address = spent[0]!.address;
    const swap = bySwap.get(address)!;
    const witness = tx.vin.flatMap((i) => i.txinwitness ?? []);
    const redeem = witness.some((item) => item.length === 64 && createHash('sha256').update(Buffer.from(item, 'hex')).digest('hex') === swap.secretHash);
    const outputs = (tx.vout as Output[]).map((o) => ({ address: addressOf(o), value: satoshis(o.value) }));
    const fee = spent.reduce((sum, p) => sum + p.value, 0n) - outputs.reduce((sum, o) => sum + o.value, 0n);
    const toUser = outputs.filter((o) => o.address === swap.user).reduce((sum, o) => sum + o.value, 0n);
    out.get(address)![redeem ? 'redeems' : 'refunds'].push({ tx: tx.txid, at, fee, toUser });
  }
  return out;
}

/** A Solana swap account's program events, from its successful transactions; the user's fee of an initiate it signed. */
async function solanaFacts(w: ChaosWorld, clock: BlockClock, swapIdHex: string): Promise<HtlcFacts> {
  const rpc = solanaRpc(w.sol.rpcUrl);
  const programs = htlcPrograms(w.sol.chain);
  const account = getAddressDecoder().decode(Buffer.from(swapIdHex, 'hex'));
  const facts = empty();
  const list = await rpc.getSignaturesForAddress(account, { commitment: 'confirmed' }).send();
  for (const s of [...list].reverse()) {
    if (s.err !== null) continue;
    const tx = await rpc.getTransaction(s.signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    if (!tx?.meta) continue;
    const at = clock.timeOf('solana_localnet', String(tx.slot)) ?? (tx.blockTime === null ? undefined : Number(tx.blockTime) * 1000);
    for (const e of swapEventsOfTransaction(programs, tx.meta.logMessages ?? [], { txHash: s.signature, blockNumber: BigInt(tx.slot), timestamp: null })) {
      if (e.swapId !== swapIdHex) continue;
      const fact: ChainTx = { tx: s.signature, at, fee: BigInt(tx.meta.fee) };
      if (e.kind === 'initiated') facts.initiates.push({ ...fact, amount: e.amount });
      else if (e.kind === 'redeemed') facts.redeems.push(fact);
      else facts.refunds.push(fact);
    }
  }
  return facts;
}

export const tronAnvil = (w: ChaosWorld): PublicClient => createPublicClient({ transport: http(w.tron.localnet.chain.anvil.rpcUrl), cacheTime: 0 });

/** The parties' balances of the assets the swaps move: the user, the service's solver, the maker. */
export async function readBalances(w: ChaosWorld): Promise<Map<string, bigint>> {
  const user = devAccount('user').address;
  const solver = devAccount('solver').address;
  const wbtc = async (c: ChaosWorld['eth'], who: Address) => c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
  const ltc = async (address: string) => (await scanUtxoSet(w.ltc.node.rpc, [address])).reduce((sum, o) => sum + o.value, 0n);
  const sol = async (address: SolanaAddress) => (await solanaRpc(w.sol.rpcUrl).getBalance(address, { commitment: 'confirmed' }).send()).value;
  const usdt = (who: string) => new TronHtlcReader(w.tron.api).trc20Balance(w.tron.deployment.usdt, who);
  const entries: Array<[string, Promise<bigint>]> = [
    ['user ethereum_localnet:wbtc', wbtc(w.eth, user)],
    ['user arbitrum_localnet:wbtc', wbtc(w.arb, user)],
    ['user tron_localnet:usdt', usdt(w.tron.user)],
    ['user litecoin_localnet:ltc', ltc(w.ltc.user)],
    ['user solana_localnet:sol', sol(w.sol.user.address)],
    ['solver ethereum_localnet:wbtc', wbtc(w.eth, solver)],
    ['solver arbitrum_localnet:wbtc', wbtc(w.arb, solver)],
    ['solver tron_localnet:usdt', usdt(w.tron.solver)],
    ['solver litecoin_localnet:ltc', ltc(w.ltc.solverWallet)],
    ['solver solana_localnet:sol', sol(w.sol.solver)],
    ['maker ethereum_localnet:wbtc', wbtc(w.eth, w.maker.evm)],
    ['maker arbitrum_localnet:wbtc', wbtc(w.arb, w.maker.evm)],
    ['maker litecoin_localnet:ltc', ltc(w.maker.ltcWallet)],
  ];
  const out = new Map<string, bigint>();
  for (const [name, value] of entries) out.set(name, await value);
  return out;
}

export async function markChains(w: ChaosWorld): Promise<ChainMark> {
  return {
    eth: (await w.eth.client.getBlockNumber()) + 1n,
    arb: (await w.arb.client.getBlockNumber()) + 1n,
    tron: (await tronAnvil(w).getBlockNumber()) + 1n,
    ltc: (await w.ltc.node.rpc.getBlockCount()) + 1,
    balances: await readBalances(w),
  };
}

export function balanceReadings(before: Map<string, bigint>, after: Map<string, bigint>): BalanceReading[] {
  return [...before].map(([name, value]) => {
    const [party, asset] = name.split(' ') as [string, string];
    return { party, asset, before: value, after: after.get(name)! };
  });
}

/** The destination fundings' broadcast deadlines, by order id: the service's jobs and (its PGlite, the process stopped) the maker's. */
export async function broadcastDeadlines(w: ChaosWorld): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const client = new pg.Client({ connectionString: w.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ order_id: string; broadcast_by: Date }>("select order_id, broadcast_by from relayer_jobs where action in ('fund', 'solver-fund') and broadcast_by is not null");
    for (const r of rows) out.set(r.order_id, r.broadcast_by.getTime());
  } finally {
    await client.end();
  }
  await w.maker.kill();
  const store = await openStore({ dataDir: w.maker.dataDir });
  try {
    const rows = await store.db.selectFrom('relayer_jobs').select(['order_id', 'broadcast_by']).where('action', 'in', ['fund', 'solver-fund']).execute();
    for (const r of rows) if (r.order_id && r.broadcast_by) out.set(r.order_id, Date.parse(`${String(r.broadcast_by).replace(' ', 'T').replace(/\+00$/, '')}Z`));
  } finally {
    await store.close();
  }
  return out;
}

/** Every swap a client made, as its chains say. */
export async function swapFacts(w: ChaosWorld, clock: BlockClock, mark: ChainMark, records: SwapRecord[], deadlines: Map<string, number>): Promise<SwapFacts[]> {
  const made = records.filter((r): r is SwapRecord & Required<Pick<SwapRecord, 'orderId' | 'source' | 'destination' | 'secretHash'>> => !!(r.orderId && r.source && r.destination && r.secretHash));
  const evm = {
    ethereum_localnet: await evmFacts(clock, 'ethereum_localnet', w.eth.client, w.eth.deployment.contracts.wbtcHtlc, mark.eth),
    arbitrum_localnet: await evmFacts(clock, 'arbitrum_localnet', w.arb.client, w.arb.deployment.contracts.wbtcHtlc, mark.arb),
    tron_localnet: await evmFacts(clock, 'tron_localnet', tronAnvil(w), tronToEvmHex(w.tron.deployment.usdtHtlc), mark.tron),
  } as Record<string, Map<string, HtlcFacts>>;
  const ltcSides = made.flatMap((r) => [r.source, r.destination].filter((s) => s.chain === 'litecoin_localnet').map((s) => ({ address: s.swapId, secretHash: r.secretHash, user: w.ltc.user })));
  const ltc = await litecoinFacts(w, clock, mark.ltc, ltcSides);
  const registry = w.world.registry;
  const side = async (s: NonNullable<SwapRecord['source']>, timelock: 'sourceTimelock' | 'destinationTimelock'): Promise<SideFacts> => {
    const htlc = s.chain === 'litecoin_localnet' ? ltc.get(s.swapId)! : s.chain === 'solana_localnet' ? await solanaFacts(w, clock, s.swapId) : (evm[s.chain]!.get(s.swapId.toLowerCase()) ?? empty());
    const chain = registry.chain(s.chain)!;
    const fundedAt = htlc.initiates[0]?.at;
    return { chain: s.chain, asset: s.asset, swapId: s.swapId, amount: s.amount, htlc, ...(fundedAt !== undefined ? { expiresAt: fundedAt + chain[timelock] * chain.blockTimeMs } : {}) };
  };
  const out: SwapFacts[] = [];
  for (const r of made) {
    const source = await side(r.source, 'sourceTimelock');
    const destination = await side(r.destination, 'destinationTimelock');
    const initiateFee = r.initiateTx ? source.htlc.initiates.find((t) => t.tx === r.initiateTx)?.fee : undefined;
    out.push({
      index: r.plan.index,
      family: r.plan.route,
      orderId: r.orderId,
      solver: r.solverId === devAccount('solver').address.toLowerCase() ? 'solver' : r.solverId === w.maker.id ? 'maker' : (r.solverId ?? 'unknown'),
      source,
      destination,
      ...(deadlines.has(r.orderId) ? { broadcastBy: deadlines.get(r.orderId)! } : {}),
      ...(initiateFee !== undefined ? { userInitiateFee: initiateFee } : {}),
      clientInitiated: r.initiated,
      clientOutcome: r.statuses.at(-1) ?? r.outcome,
    });
  }
  return out;
}
