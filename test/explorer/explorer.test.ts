// The explorer in a real browser: Debian's Chromium driven by playwright-core, against `hashlock dev`'s
// wiring (the service with its watchers, solver, relayer and event recorder) on two local anvil chains
// mining a block a second. An order page opened before the swap moves through its timeline as the
// swap happens, without a reload; the recent list takes a new order live; a search by address finds
// the order; a search that matches nothing says so.
//
// Without /usr/bin/chromium the suite fails in CI (CI=true) and is skipped loudly elsewhere.
// EXPLORER_SCREENSHOT=1 rewrites docs/explorer.png with the finished swap's order page.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createWalletClient, createPublicClient, http, type Address, type Hex } from 'viem';
import { devAccount } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { signGaslessInitiate } from '../helpers/gasless.ts';
import { evmOnlyConfig } from '../helpers/service-config.ts';

const CHROMIUM = '/usr/bin/chromium';
const AMOUNT = 100_000n;
const SCREENSHOT = new URL('../../docs/explorer.png', import.meta.url);

/**
 * Run in the page (as text: tsx's helpers, which a compiled function would call, do not exist there):
 * a marker only this document holds, and the list of every status the page has shown.
 */
const WATCH_STATUS = `(() => {
  window.explorerMarker = 'the same document';
  window.shown = [];
  const note = () => {
    const status = document.querySelector('.status-line .badge')?.getAttribute('data-status');
    if (status && window.shown.at(-1) !== status) window.shown.push(status);
  };
  note();
  new MutationObserver(note).observe(document.getElementById('view'), { childList: true, subtree: true });
})()`;

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`);
  console.warn(`\n!!! SKIPPED: ${CHROMIUM} is missing; install it (apt-get install chromium) to run the explorer's browser tests\n`);
}

describe('the explorer in Chromium', { skip: hasChromium ? false : `${CHROMIUM} is not installed` }, () => {
  let dataDir: string;
  let dev: Dev;
  let browser: Browser;
  const user = devAccount('user');
  /** Errors the pages raised, CSP refusals among them (Chromium reports those on the console). */
  const pageErrors: string[] = [];

  const api = async (path: string, init?: { method: string; body: object }): Promise<any> => {
    const res = await fetch(`${dev.apiUrl}${path}`, {
      method: init?.method ?? 'GET',
      headers: { 'service-app-id': dev.appKey, 'content-type': 'application/json' },
      ...(init ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = (await res.json()) as { result?: any; error?: string };
    assert.ok(res.ok && body.result !== undefined, `${path}: ${res.status} ${body.error}`);
    return body.result;
  };

  const createOrder = async () => {
    const [quote] = await api(`/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${AMOUNT}`);
    return api('/v2/orders', {
      method: 'POST',
      body: {
        source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: quote.destination.amount },
        nonce: randomBytes(10).toString('hex'),
      },
    });
  };

  /** The client's part of a gasless swap: approve the HTLC, sign the initiate, let the relayer send it. */
  const initiate = async (created: any) => {
    const record = dev.chains.find((c) => c.chain.key === 'ethereum_localnet')!.record as { rpc_url: string };
    const client = createPublicClient({ transport: http(record.rpc_url) });
    const wallet = createWalletClient({ account: user, transport: http(record.rpc_url) });
    const approval = created.approval_transaction as { to: Address; data: Hex };
    const hash = await wallet.sendTransaction({ chain: undefined, to: approval.to, data: approval.data });
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
    const signature = await signGaslessInitiate(user, created.typed_data);
    await api(`/v2/orders/${created.order_id}?action=initiate`, { method: 'PATCH', body: { signature } });
  };

  const openPage = async (path: string): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (err) => pageErrors.push(`${path}: ${err.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`${path}: ${message.text()}`);
    });
    await page.goto(`${dev.apiUrl}${path}`);
    return page;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'hashlock-explorer-'));
    dev = await startDev(evmOnlyConfig(dataDir));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });

  after(async () => {
    await browser?.close();
    await dev?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('an order page opened before the swap moves through the timeline as it happens, without a reload', async (t) => {
    const created = await createOrder();
    const id = created.order_id as string;
    const page = await openPage(`/explorer/orders/${id}`);
    await page.locator('#timeline li[data-status="created"]').waitFor();
    assert.equal(await page.locator('.order-id').textContent(), id);
    assert.equal(await page.locator('[data-field="source-amount"]').textContent(), '0.001 WBTC');

    // A marker that only this document holds, and a record of every status the page shows.
    await page.evaluate(WATCH_STATUS);

    await initiate(created);
    await page.locator('.status-line .badge[data-status="completed"]').waitFor({ timeout: 120_000 });

    const seen = await page.evaluate(() => {
      const w = globalThis as any;
      return { marker: w.explorerMarker as string, shown: w.shown as string[], navigations: w.performance.getEntriesByType('navigation').length as number };
    });
    t.diagnostic(`statuses the open page showed: ${seen.shown.join(' -> ')}`);
    assert.equal(seen.marker, 'the same document', 'the page was never reloaded');
    assert.equal(seen.navigations, 1);
    assert.equal(seen.shown[0], 'created');
    assert.equal(seen.shown.at(-1), 'completed');
    assert.ok(seen.shown.length >= 3, `the page showed the swap's steps as they came: ${seen.shown.join(' -> ')}`);

    // The timeline lists each recorded status with its time, in order, the current one last.
    const steps = await page.locator('#timeline li').evaluateAll((items) =>
      items.map((li) => ({ status: li.getAttribute('data-status'), at: li.querySelector('time')?.getAttribute('datetime') ?? null })),
    );
    assert.equal(steps[0]!.status, 'created');
    assert.equal(steps.at(-1)!.status, 'completed');
    assert.ok(steps.every((s) => s.at !== null && /^\d{4}-\d{2}-\d{2}T/.test(s.at)), JSON.stringify(steps));
    assert.ok(seen.shown.every((s) => steps.some((step) => step.status === s)), 'every status shown is in the timeline');

    // Both legs: the amounts in the assets' units, the transactions, the confirmations.
    const order = await api(`/v2/orders/${id}`);
    assert.equal(await page.locator('[data-field="destination-amount"]').textContent(), `0.${order.destination_swap.amount.padStart(8, '0').replace(/0+$/, '')} WBTC`);
    assert.match((await page.locator('[data-field="source-initiate"]').textContent())!, new RegExp(order.source_swap.initiate_tx_hash));
    assert.match((await page.locator('[data-field="destination-redeem"]').textContent())!, new RegExp(order.destination_swap.redeem_tx_hash));
    assert.match((await page.locator('[data-field="source-confirmations"]').textContent())!, /^\d+ \/ 1$/);
    if (process.env.EXPLORER_SCREENSHOT) await page.screenshot({ path: SCREENSHOT.pathname, fullPage: true });
    await page.close();

    // Where the chain names an explorer, each hash links to <explorer_url>/tx/<hash>.
    const linked = await browser.newPage();
    await linked.route('**/explorer/api/registry', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      for (const c of body.result.chains) c.explorer_url = c.chain === 'ethereum_localnet' ? 'https://eth.example/' : '';
      await route.fulfill({ response: res, json: body });
    });
    await linked.goto(`${dev.apiUrl}/explorer/orders/${id}`);
    const link = linked.locator('[data-field="source-initiate"] a');
    assert.equal(await link.getAttribute('href'), `https://eth.example/tx/${order.source_swap.initiate_tx_hash}`);
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await linked.locator('[data-field="destination-redeem"] a').count(), 0, 'no explorer, no link');
    await linked.close();
  });

  test('the recent list takes a new order live', async () => {
    const page = await openPage('/explorer');
    await page.locator('#orders').waitFor();
    await page.locator('#live:not([hidden])').waitFor();
    const created = await createOrder();
    await page.locator(`#orders tr[data-order-id="${created.order_id}"]`).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#orders tbody tr').first().getAttribute('data-order-id'), created.order_id);
    assert.equal(await page.locator(`#orders tr[data-order-id="${created.order_id}"] .badge`).getAttribute('data-status'), 'created');
    await page.close();
  });

  test('a search by the initiator address finds the order; one that matches nothing says so', async () => {
    const page = await openPage('/explorer');
    await page.locator('#orders').waitFor();
    await page.fill('#q', user.address.toLowerCase());
    await page.press('#q', 'Enter');
    await page.locator('#summary').waitFor();
    assert.match((await page.locator('#summary').textContent())!, /orders? with address/);
    const listed = await page.locator('#orders tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-order-id')));
    const mine = await api(`/v2/orders?address=${user.address}&per_page=100`);
    assert.deepEqual(listed, mine.data.map((o: any) => o.order_id));
    assert.ok(listed.length >= 2);

    await page.fill('#q', 'no-such-thing');
    await page.press('#q', 'Enter');
    const error = page.locator('.error');
    await error.waitFor();
    assert.match((await error.textContent())!, /No order matches no-such-thing\. Search by an order id/);

    // A search by order id goes straight to its page.
    await page.fill('#q', listed[0]!.toUpperCase());
    await page.press('#q', 'Enter');
    await page.waitForURL(`**/explorer/orders/${listed[0]}`);
    await page.locator('#timeline').waitFor();
    await page.close();
  });

  test('an order page for a malformed or unknown id says what is wrong', async () => {
    // Not through openPage: the browser logs the 400 and 404 answers as console errors, which are expected here.
    const page = await browser.newPage();
    const raised: string[] = [];
    page.on('pageerror', (err) => raised.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 40[04]/.test(message.text())) raised.push(message.text());
    });
    for (const [id, said] of [
      ['not-an-order', /'order'.*64 hexadecimal/],
      ['ab'.repeat(32), /not found/i],
    ] as const) {
      await page.goto(`${dev.apiUrl}/explorer/orders/${id}`);
      await page.locator('.error').waitFor();
      assert.match((await page.locator('.error').textContent())!, said, id);
    }
    assert.deepEqual(raised, []);
    await page.close();
  });

  test('amounts are formatted in string arithmetic, exactly', async () => {
    const page = await openPage('/explorer');
    const formatted = await page.evaluate(async () => {
      const url = '/explorer/assets/explorer.js';
      const { formatUnits } = await import(url);
      return [
        formatUnits('0', 8),
        formatUnits('100000', 8),
        formatUnits('99700', 8),
        formatUnits('1000000000', 6),
        formatUnits('123456789012345678901', 18),
        formatUnits('000120', 2),
        formatUnits('5', 0),
      ];
    });
    assert.deepEqual(formatted, ['0', '0.001', '0.000997', '1,000', '123.456789012345678901', '1.2', '5']);
    await page.close();
  });

  test('no page raised an error or a CSP refusal', () => {
    assert.deepEqual(pageErrors, []);
  });
});
