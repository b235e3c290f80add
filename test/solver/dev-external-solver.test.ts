// `hashlock dev --external-solver` (`npm start -- --external-solver`): a `hashlock solver` runs beside
// the in-process solver with its own key and PGlite, funded on the dev chains, quoting under the
// in-process strategies; `hashlock swap` goes to it, and a restart of the devnet resumes it as the
// same registered solver.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runSwap } from '../../src/cli/swap.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { evmOnlyConfig } from '../helpers/service-config.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-dev-external-solver-'));
let dev: Dev | undefined;
after(async () => {
  await dev?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const quoteOf = async (d: Dev) => {
  const res = await fetch(`${d.apiUrl}/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000`, { headers: { 'service-app-id': d.appKey } });
  return ((await res.json()) as { result?: Array<{ solver_id: string; destination: { amount: string } }> }).result ?? [];
};

test('the dev external solver quotes 10 bips under the in-process one, fills a swap, and is the same solver after a restart', async () => {
  dev = await startDev(evmOnlyConfig(dataDir), { externalSolver: true });
  const id = dev.externalSolver!.id;
  assert.match(id, /^dev-maker-[0-9a-f]{6}$/);
  // The service reads its funds within 5 s; then it is first, at 20 bips against 30.
  let quote = await quoteOf(dev);
  for (const end = Date.now() + 30_000; quote[0]?.solver_id !== id && Date.now() < end; quote = await quoteOf(dev)) await new Promise((r) => setTimeout(r, 250));
  assert.deepEqual(quote.map((q) => [q.solver_id === id ? 'external' : 'in-process', q.destination.amount]), [['external', '99800'], ['in-process', '99700']]);

  const { orderId, statuses } = await runSwap({ from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', amount: '100000', dataDir, timeoutMs: 90_000, print: () => undefined });
  assert.equal(statuses.at(-1), 'completed');
  const order = (await (await fetch(`${dev.apiUrl}/v2/orders/${orderId}`, { headers: { 'service-app-id': dev.appKey } })).json()) as { result: { solver_id: string } };
  assert.equal(order.result.solver_id, id);

  await dev.stop();
  dev = await startDev(evmOnlyConfig(dataDir), { externalSolver: true });
  assert.equal(dev.externalSolver!.id, id, 'its solver key kept in devnet.json: the same solver');
});
