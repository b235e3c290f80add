import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../src/errors.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import { destinationAmount, Quoter, sourceAmountFor } from '../../src/pricing/quote.ts';
import { buildStrategies, microUsd } from '../../src/pricing/strategies.ts';
import { localnetRegistry, SOLVER } from '../helpers/fixtures.ts';

const registry = localnetRegistry();
const OTHER = { ...SOLVER, id: 'solver-b', name: 'b' };
const strategies = buildStrategies(
  [
    { solver: SOLVER.id, from: 'ethereum_localnet:wbtc', to: ['arbitrum_localnet:wbtc', 'arbitrum_localnet:usdc'], fee_bips: 30 },
    { solver: OTHER.id, from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', fee_bips: 10, spread_bips: 5, fixed_fee_usd: '0.5' },
  ],
  [SOLVER, OTHER],
  registry,
);
const prices = new StaticPriceSource({ bitcoin: 95000, 'usd-coin': 1 });
const byPair = (solver: string, to: string) => strategies.find((s) => s.solverId === solver && s.to.id === to)!;
const P = { source: 95_000_000_000n, destination: 95_000_000_000n };

test('destination amounts: same-price pair less fee bips; cross-asset conversion uses both decimals', () => {
  const wbtc = byPair(SOLVER.id, 'arbitrum_localnet:wbtc');
  assert.equal(destinationAmount(wbtc, 100_000n, P, 0), 99_700n);
  assert.equal(destinationAmount(wbtc, 100_000n, P, 20), 99_500n, 'affiliate bips come out of the destination');
  const usdc = byPair(SOLVER.id, 'arbitrum_localnet:usdc');
  // 0.001 BTC at 95,000 USD = 95 USD = 95,000,000 micro-USDC, less 0.3 %
  assert.equal(destinationAmount(usdc, 100_000n, { source: 95_000_000_000n, destination: 1_000_000n }, 0), 94_715_000n);
  const other = byPair(OTHER.id, 'arbitrum_localnet:wbtc');
  // spread 5 bips then fee 10 bips, then 0.5 USD = 526.3.. sats, rounded up to 527
  assert.equal(destinationAmount(other, 10_000_000n, P, 0), ((10_000_000n * 9995n) / 10000n) * 9990n / 10000n - 527n);
  assert.equal(microUsd('0.5'), 500_000n);
  assert.equal(microUsd('12.000001'), 12_000_001n);
});

test('sourceAmountFor is the least source amount that pays what is wanted', () => {
  for (const s of [byPair(SOLVER.id, 'arbitrum_localnet:wbtc'), byPair(OTHER.id, 'arbitrum_localnet:wbtc'), byPair(SOLVER.id, 'arbitrum_localnet:usdc')]) {
    const prices = s.to.id.endsWith('usdc') ? { source: 95_000_000_000n, destination: 1_000_000n } : P;
    for (const wanted of [1n, 999n, 12_345n, 99_700n, 7_654_321n, 123_456_789n]) {
      for (const affiliate of [0, 25]) {
        const source = sourceAmountFor(s, wanted, prices, affiliate);
        assert.ok(destinationAmount(s, source, prices, affiliate) >= wanted, `${s.to.id} ${wanted}`);
        assert.ok(destinationAmount(s, source - 1n, prices, affiliate) < wanted, `${s.to.id} ${wanted} is least`);
      }
    }
  }
});

test('the quoter lists solvers that can fill, best first, and names why none can', async () => {
  const available = new Map([
    [SOLVER.id, 10_000_000n],
    [OTHER.id, 10_000_000n],
  ]);
  const quoter = new Quoter(strategies, prices, async () => available);
  const from = registry.asset('ethereum_localnet:wbtc')!;
  const to = registry.asset('arbitrum_localnet:wbtc')!;
  const quotes = await quoter.quote({ from, to, fromAmount: 1_000_000n, affiliateFeeBips: 0 });
  assert.deepEqual(quotes.map((q) => [q.strategy.solverId, q.destinationAmount]), [
    [OTHER.id, ((1_000_000n * 9995n) / 10000n) * 9990n / 10000n - 527n],
    [SOLVER.id, 997_000n],
  ]);
  const wanted = await quoter.quote({ from, to, toAmount: 500_000n, affiliateFeeBips: 0 });
  assert.ok(wanted.every((q) => q.destinationAmount === 500_000n));
  assert.ok(wanted[0]!.sourceAmount <= wanted[1]!.sourceAmount);

  const rejects = async (req: Parameters<Quoter['quote']>[0], code: string, message: RegExp, q = quoter) =>
    assert.rejects(q.quote(req), (e: unknown) => e instanceof AppError && e.code === code && message.test(e.message));
  await rejects({ from: to, to: from, fromAmount: 1_000_000n, affiliateFeeBips: 0 }, 'no_route', /no order pair found for arbitrum_localnet:wbtc -> ethereum_localnet:wbtc/);
  await rejects({ from, to, fromAmount: 999n, affiliateFeeBips: 0 }, 'amount_out_of_range', /expected amount to be within the range of 1000 to 1000000000/);
  await rejects({ from, to, fromAmount: 20_000_000n, affiliateFeeBips: 0 }, 'insufficient_liquidity', /insufficient liquidity: at most 10000000/);
  const noPrices = new Quoter(strategies, new StaticPriceSource({}), async () => available);
  await rejects({ from, to, fromAmount: 1_000_000n, affiliateFeeBips: 0 }, 'unavailable', /no current USD price for ethereum_localnet:wbtc/, noPrices);
});

test('strategy config errors name the field', () => {
  const bad: Array<[object, RegExp]> = [
    [{ solver: 'nobody', from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', fee_bips: 1 }, /strategies\[0\]\.solver: no solver nobody/],
    [{ solver: SOLVER.id, from: 'ethereum_localnet:doge', to: 'arbitrum_localnet:wbtc', fee_bips: 1 }, /strategies\[0\]\.from: no asset ethereum_localnet:doge/],
    [{ solver: SOLVER.id, from: 'ethereum_localnet:wbtc', to: 'litecoin_localnet:ltc', fee_bips: 1 }, /strategies\[0\]\.to: solver .* has no address on litecoin_localnet/],
    [{ solver: SOLVER.id, from: ['ethereum_localnet:wbtc', 'ethereum_localnet:usdc'], to: 'arbitrum_localnet:wbtc', fee_bips: 1, min_amount: '5' }, /strategies\[0\]\.min_amount: amounts are in base units of one source asset/],
    [{ solver: SOLVER.id, from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', fee_bips: 1, min_amount: '9', max_amount: '5' }, /strategies\[0\]\.min_amount: is greater than max_amount/],
  ];
  const evmOnly = { ...SOLVER, addresses: { ethereum_localnet: SOLVER.addresses.ethereum_localnet!, arbitrum_localnet: SOLVER.addresses.arbitrum_localnet! } };
  for (const [config, message] of bad) assert.throws(() => buildStrategies([config as never], [evmOnly], registry), message);
  const twice = { solver: SOLVER.id, from: 'ethereum_localnet:wbtc', to: 'arbitrum_localnet:wbtc', fee_bips: 1 };
  assert.throws(() => buildStrategies([twice, twice], [SOLVER], registry), /strategies\[1\]: solver .* already has a strategy/);
});
