// Requests whose PostgreSQL connection is terminated under them: retried on a new connection, so
// the client gets its answer, and a 503 with Retry-After only when no connection can be had.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { buildApi } from '../../src/api/app.ts';
import { REQUEST_RETRY_MS, RETRY_AFTER_SECONDS } from '../../src/api/lost-connection.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import { openStore } from '../../src/store/database.ts';
import { openTestApi, TEST_PRICES, type TestApi } from '../helpers/api.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { waitFor } from '../helpers/wait.ts';

const skip = process.env.DATABASE_URL ? false : process.env.CI ? false : 'DATABASE_URL is not set';
if (skip) console.warn(`\n*** SKIPPING the lost-connection request tests: ${skip} ***\n`);

describe('requests whose database connection is lost', { skip }, () => {
  let t: TestApi & { store: { url?: string } };
  let admin: pg.Client;

  before(async () => {
    t = (await openTestApi('postgres'));
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 10n ** 20n });
    admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await t.close();
  });

  const terminateAll = async (): Promise<number> => {
    const name = new URL(t.store.url!).pathname.slice(1);
    const { rows } = await admin.query<{ n: number }>(
      'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t',
      [name],
    );
    return rows[0]!.n;
  };

  const createOrder = () =>
    t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key },
      payload: {
        source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
        nonce: randomHex32().slice(0, 20),
      },
    });

  /** The LISTEN connections open on the test's database (the event hub's, the order cache's). */
  const listeners = async (): Promise<number> => {
    const { rows } = await admin.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = $1 and query like 'listen %'", [
      new URL(t.store.url!).pathname.slice(1),
    ]);
    return rows[0]!.n;
  };

  test('every connection terminated every 250 ms while orders are created and read: every request answered', async () => {
    const listening = await listeners();
    assert.ok(listening > 0, 'the API listens for changes');
    let terminating = true;
    const rounds: number[] = [];
    const terminator = (async () => {
      while (terminating) {
        await new Promise((r) => setTimeout(r, 250));
        rounds.push(await terminateAll());
      }
    })();
    const statuses = new Map<string, number[]>();
    const note = (what: string, status: number): void => {
      statuses.set(what, [...(statuses.get(what) ?? []), status]);
    };
    try {
      // Clients start two requests every 50 ms for 3 s, each one call, no client retry.
      const calls: Array<Promise<void>> = [];
      for (let i = 0; i < 60; i++) {
        calls.push(
          createOrder().then(async (res) => {
            note('POST /v2/orders', res.statusCode);
            if (res.statusCode !== 201) return;
            const id = res.json<{ result: { order_id: string } }>().result.order_id;
            note('GET /v2/orders/{id}', (await t.api.inject({ url: `/v2/orders/${id}`, headers: { 'service-app-id': t.key } })).statusCode);
          }),
        );
        calls.push(t.api.inject({ url: '/v2/orders?per_page=5', headers: { 'service-app-id': t.key } }).then((res) => note('GET /v2/orders', res.statusCode)));
        await new Promise((r) => setTimeout(r, 50));
      }
      await Promise.all(calls);
    } finally {
      terminating = false;
      await terminator;
    }
    assert.ok(rounds.filter((n) => n > 0).length >= 8, `connections were terminated while the requests ran: ${rounds.join(',')}`);
    for (const [what, seen] of statuses) {
      const expected = what.startsWith('POST') ? 201 : 200;
      assert.deepEqual([...new Set(seen)], [expected], `${what}: every answer ${expected}, got ${seen.join(',')}`);
    }
    assert.equal(statuses.get('GET /v2/orders/{id}')?.length, 60, 'every created order is there to read');
    // Each listener reconnected once per loss, not once more each time (a leak that kept processes alive).
    await waitFor(async () => (await listeners()) === listening, 10_000, 'the listeners to reconnect');
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(await listeners(), listening, 'as many listeners as before, after their reconnections');
  });

  test('a database out of reach for longer than the retry window: 503 naming the database, with Retry-After', async () => {
    const server = new URL(t.store.url!);
    const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const store = await openStore({ databaseUrl: proxy.through(t.store.url!), poolSize: 2 });
    const api = await buildApi({ store, registry: t.registry, prices: new StaticPriceSource(TEST_PRICES), secrets: t.secrets, version: 'test' });
    try {
      await api.ready();
      assert.equal((await api.inject({ url: '/v2/orders?per_page=5', headers: { 'service-app-id': t.key } })).statusCode, 200);
      proxy.cut();
      const started = Date.now();
      const res = await api.inject({ url: '/v2/orders?per_page=5', headers: { 'service-app-id': t.key } });
      const waited = Date.now() - started;
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers['retry-after'], String(RETRY_AFTER_SECONDS));
      assert.match(res.json<{ error: string }>().error, /database is unavailable/);
      assert.ok(waited >= REQUEST_RETRY_MS - 500, `it kept trying for the retry window first (${waited} ms)`);
      // Back within the window: answered.
      const again = api.inject({ url: '/v2/orders?per_page=5', headers: { 'service-app-id': t.key } });
      setTimeout(() => proxy.restore(), 1_000);
      assert.equal((await again).statusCode, 200, 'a request waiting when the database came back got its answer');
    } finally {
      proxy.restore();
      await api.close();
      await store.close();
      await proxy.close();
    }
  });
});
