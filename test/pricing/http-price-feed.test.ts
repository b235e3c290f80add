import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { HttpPriceFeed } from '../../src/pricing/http-price-feed.ts';
import { MovableClock } from '../helpers/clock.ts';
import { waitFor } from '../helpers/wait.ts';

let server: Server;
let url: string;
let body: unknown = { bitcoin: { usd: 95000 }, 'usd-coin': { usd: 1 } };
let status = 200;
const requests: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3/simple/price`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

test('the feed asks for its ids in USD and serves what it got', async () => {
  const feed = new HttpPriceFeed({ url, priceIds: ['bitcoin', 'usd-coin', 'litecoin'] });
  assert.equal(feed.usdPrice('bitcoin'), undefined, 'no price before the first fetch');
  assert.equal(await feed.refresh(), true);
  assert.match(requests.at(-1)!, /ids=bitcoin%2Cusd-coin%2Clitecoin&vs_currencies=usd/);
  assert.equal(feed.usdPrice('bitcoin'), 95000);
  assert.equal(feed.usdPrice('usd-coin'), 1);
  assert.equal(feed.usdPrice('litecoin'), undefined, 'an id the feed did not price');
});

test('a change bumps the revision; bad values are ignored; failures keep the last prices until too old', async () => {
  const feed = new HttpPriceFeed({ url, priceIds: ['bitcoin', 'usd-coin'], maxAgeMs: 200 });
  await feed.refresh();
  const first = feed.revision;
  await feed.refresh();
  assert.equal(feed.revision, first, 'same prices, same revision');
  body = { bitcoin: { usd: 96000 }, 'usd-coin': { usd: 'one' } };
  await feed.refresh();
  assert.equal(feed.revision, first + 1);
  assert.equal(feed.usdPrice('bitcoin'), 96000);
  assert.equal(feed.usdPrice('usd-coin'), undefined);

  status = 500;
  const errors: unknown[] = [];
  const clock = new MovableClock();
  const failing = new HttpPriceFeed({ url, priceIds: ['bitcoin'], maxAgeMs: 200, onError: (e) => errors.push(e), clock });
  status = 200;
  await failing.refresh();
  status = 500;
  assert.equal(await failing.refresh(), false);
  assert.match(String(errors[0]), /price feed answered 500/);
  assert.equal(failing.usdPrice('bitcoin'), 96000, 'still fresh enough');
  clock.advance(250);
  assert.equal(failing.usdPrice('bitcoin'), undefined, 'too old to quote on');
  status = 200;
  body = { bitcoin: { usd: 95000 }, 'usd-coin': { usd: 1 } };
});

test('start fetches at once and keeps refreshing until stopped', async () => {
  const feed = new HttpPriceFeed({ url, priceIds: ['bitcoin'], refreshMs: 100 });
  const before = requests.length;
  assert.equal(await feed.start(), true);
  assert.equal(requests.length, before + 1);
  await waitFor(() => requests.length >= before + 2, 5_000, 'a refresh on its interval');
  feed.stop();
  const seen = requests.length;
  // The interval is a real timer: no fetch in three of its intervals after the stop.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(requests.length, seen, 'no fetch after stop');
});
