// 100 gasless swaps at once, as clients make them: each quotes its own amount, then orders from one of
// two `hashlock solver` processes by solver_id (each its own key, PGlite, chain workers and transaction
// engine, talking to the service through the solver API) at that quote's price, or from the best quote
// when its solver did not answer in time; on `hashlock dev`'s two anvil chains at their block times.
// Each swap from its quote to `completed` as the client polls it, per solver, then until each solver has
// redeemed every source it is owed. At the default answer deadline and at a longer one.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devAccount } from '../src/localnet/accounts.ts';
import { startDev } from '../src/localnet/dev.ts';
import { registerSolver } from '../src/store/solver-registry.ts';
import { signGaslessInitiate } from '../test/helpers/gasless.ts';
import { startMakerProcess, type MakerProcess } from '../test/e2e/solver-maker.ts';
import { evmOnlyConfig } from '../test/helpers/service-config.ts';
import { devApi } from './dev-api.ts';
import { evmDeployment } from './settlement.ts';
import { quantile, type Row } from './stats.ts';
import { wbtcOrderBody } from './wbtc-order.ts';

const FROM = 'ethereum_localnet:wbtc';
const TO = 'arbitrum_localnet:wbtc';
const SWAPS = Number(process.env.BENCH_SPLIT_SWAPS ?? 100);
const AMOUNT = 100_000n;
const POLL_MS = 500;

/** At the default answer deadline (300 ms), then at a longer one: how many of the burst's orders the late answers cost. */
export async function benchSolverSplit(): Promise<Row[]> {
  return [...(await splitRun(300)), ...(await splitRun(2_000))];
}

async function splitRun(deadlineMs: number): Promise<Row[]> {
  const serviceDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-'));
  const dev = await startDev({ ...evmOnlyConfig(serviceDir), logLevel: 'warn', solverQuoteDeadlineMs: deadlineMs });
  const makers: Array<{ process: MakerProcess; address: Address }> = [];
  try {
    const [eth, arb] = ['ethereum_localnet', 'arbitrum_localnet'].map((key) => evmDeployment(dev, key)) as [ReturnType<typeof evmDeployment>, ReturnType<typeof evmDeployment>];
    const user = devAccount('user');
    const clientOf = (rpcUrl: string) => createPublicClient({ transport: http(rpcUrl), cacheTime: 0 });
    const wbtcOf = (d: typeof eth, who: Address) => clientOf(d.rpcUrl).readContract({ address: d.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
    const send = async (d: typeof eth, write: (wallet: ReturnType<typeof createWalletClient>) => Promise<`0x${string}`>) => {
      const wallet = createWalletClient({ account: user, transport: http(d.rpcUrl) });
      await clientOf(d.rpcUrl).waitForTransactionReceipt({ hash: await write(wallet) });
    };
    await send(eth, (w) => w.writeContract({ account: user, chain: undefined, address: eth.contracts.wbtc, abi: erc20Abi, functionName: 'approve', args: [eth.contracts.wbtcHtlc, maxUint256] }));

    for (const id of ['maker-1', 'maker-2']) {
      const key = generatePrivateKey();
      const address = privateKeyToAccount(key).address;
      for (const d of [eth, arb]) {
        await fetch(d.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setBalance', params: [address, `0x${parseEther('10').toString(16)}`] }) });
      }
      await send(arb, (w) => w.writeContract({ account: user, chain: undefined, address: arb.contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [address, 10_000_000n] }));
      const apiKey = (await registerSolver(dev.service.store.db, { id, name: id })).key;
      const process = await startMakerProcess({
        id,
        key,
        serviceApi: dev.apiUrl,
        apiKey,
        chains: Object.fromEntries(dev.chains.map((c) => [c.chain.key, c.access])),
        strategies: [{ solver: id, from: FROM, to: TO, fee_bips: 5 }],
      });
      makers.push({ process, address });
    }
    const api = devApi(dev);
    // Both quote once the service has read their funds (every 5 s).
    for (const until = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 500))) {
      const quotes = (await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=${AMOUNT}`)) as Array<{ solver_id: string; destination: { amount: string } }>;
      if (quotes.filter((q) => q.solver_id.startsWith('maker-')).length === 2) break;
      if (Date.now() > until) throw new Error(`the makers do not both quote: ${JSON.stringify(quotes)}`);
    }
    const sourcesBefore = await Promise.all(makers.map((m) => wbtcOf(eth, m.address)));

    let unansweredQuotes = 0;
    const swap = async (i: number) => {
      const wanted = `maker-${(i % 2) + 1}`;
      const amount = AMOUNT + BigInt(i);
      const started = performance.now();
      const quotes = (await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=${amount}`)) as Array<{ solver_id: string; destination: { amount: string } }>;
      const chosen = quotes.find((q) => q.solver_id === wanted) ?? quotes[0]!;
      if (chosen.solver_id !== wanted) unansweredQuotes++;
      const solverId = chosen.solver_id;
      const body = { ...wbtcOrderBody(user.address, amount, chosen.destination.amount), solver_id: solverId, nonce: randomBytes(8).toString('hex') };
      const created = await api('/v2/orders', { method: 'POST', body });
      const id = created.order_id as string;
      await api(`/v2/orders/${id}?action=initiate`, { method: 'PATCH', body: { signature: await signGaslessInitiate(user, created.typed_data) } });
      for (let order = await api(`/v2/orders/${id}`); order.status !== 'completed'; order = await api(`/v2/orders/${id}`)) {
        if (performance.now() - started > 300_000) throw new Error(`order ${id} did not complete: ${order.status}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      return { solverId, amount, ms: performance.now() - started };
    };
    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: SWAPS }, (_, i) => swap(i)));
    const seconds = (performance.now() - started) / 1000;
    const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    // Each maker's sources redeemed: what it is owed, on chain.
    const owed = makers.map((_, i) => done.filter((d) => d.solverId === `maker-${i + 1}`).reduce((sum, d) => sum + d.amount, 0n));
    const redeemStarted = performance.now();
    for (const until = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 500))) {
      const now = await Promise.all(makers.map((m) => wbtcOf(eth, m.address)));
      if (now.every((b, i) => b - sourcesBefore[i]! >= owed[i]!)) break;
      if (Date.now() > until) throw new Error('the makers did not redeem every source within 2 min');
    }
    const redeemTail = (performance.now() - redeemStarted) / 1000;
    const note = `answer deadline ${deadlineMs} ms; hashlock dev (PGlite, anvil ${dev.chains[0]!.chain.blockTimeMs / 1000} s blocks), two hashlock solver processes, the service and the clients in the bench process; ${SWAPS - unansweredQuotes}/${SWAPS} quotes had their solver's answer; ${done.length}/${SWAPS} completed (${done.filter((d) => !d.solverId.startsWith('maker-')).length} by the in-process solver) in ${seconds.toFixed(1)} s (${(done.length / seconds).toFixed(2)} swaps/s), every source redeemed ${redeemTail.toFixed(1)} s later${failure ? `; first failure: ${String(failure.reason)}` : ''}`;
    return makers.map((_, i) => {
      const ms = done.filter((d) => d.solverId === `maker-${i + 1}`).map((d) => d.ms);
      return {
        bench: `${SWAPS} swaps at once across two solvers, answers within ${deadlineMs} ms`,
        solver: `maker-${i + 1}`,
        swaps: ms.length,
        'p50 s': ms.length ? Number((quantile(ms, 0.5) / 1000).toFixed(1)) : '',
        'p95 s': ms.length ? Number((quantile(ms, 0.95) / 1000).toFixed(1)) : '',
        note,
      };
    });
  } finally {
    for (const m of makers) await m.process.remove();
    await dev.stop();
    rmSync(serviceDir, { recursive: true, force: true });
  }
}
