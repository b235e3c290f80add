import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RouteValidator } from '@gardenfi/orderbook';
import fc from 'fast-check';
import { loadRegistry } from '../../src/chains/registry.ts';
import { ConfigError } from '../../src/config/schema-check.ts';
import { AppError } from '../../src/errors.ts';
import { RoutePolicy, type RouteEnd, type RoutePolicyRules } from '../../src/pricing/route-policy.ts';
import { LOCALNET_REGISTRY_PATH } from '../helpers/fixtures.ts';

const policy = (rules: Partial<RoutePolicyRules>): RoutePolicy =>
  new RoutePolicy({ default: 'open', isolation_groups: [], blacklist_pairs: [], whitelist_overrides: [], ...rules });

const end = (id: string): RouteEnd => {
  const [chain, symbol] = id.split(':') as [string, string];
  return { chain, symbol };
};

const decide = (p: RoutePolicy, from: string, to: string) => p.decide(end(from), end(to));

/** Garden's SDK's answer, as its AssetManager asks it, with the policy cached so nothing is fetched. */
async function sdkAllows(rules: RoutePolicyRules, from: string, to: string): Promise<boolean> {
  const validator = new RouteValidator('http://127.0.0.1:9/v2/policy', 'f'.repeat(64));
  validator.setPolicy(rules);
  // The SDK reads an asset's chain, symbol and lower-cased id (ChainAsset), which accepts only its own chain names.
  const asset = (id: string) => ({ ...end(id), toString: () => id.toLowerCase() });
  return validator.isValidRoute(asset(from), asset(to));
}

/**
 * Policies and routes with the answer of Garden's SDK (@gardenfi/orderbook 3.1.3,
 * RouteValidator.isValidRoute) for each, worked out from its logic by hand; the SDK itself is
 * asked below too.
 */
const SDK_AGREEMENT: Array<{ policy: RoutePolicyRules; cases: Array<[string, string, boolean]> }> = [
  {
    // The example of Garden's docs.
    policy: { default: 'open', isolation_groups: ['ethereum:SEED <-> arbitrum:SEED'], blacklist_pairs: ['bitcoin:BTC -> starknet:*'], whitelist_overrides: [] },
    cases: [
      ['ethereum:seed', 'arbitrum:seed', true],
      ['arbitrum:seed', 'ethereum:seed', true],
      ['ethereum:SEED', 'arbitrum:Seed', true],
      ['ethereum:seed', 'bitcoin:btc', false],
      ['bitcoin:btc', 'ethereum:seed', false],
      ['base:seed', 'ethereum:seed', false],
      ['bitcoin:btc', 'starknet:wbtc', false],
      ['bitcoin:btc', 'starknet:strk', false],
      ['starknet:wbtc', 'bitcoin:btc', true],
      ['bitcoin:btc', 'ethereum:wbtc', true],
      ['ethereum:wbtc', 'ethereum:wbtc', false],
    ],
  },
  {
    // Closed by default: the whitelist overrides the blacklist, and opens nothing else.
    policy: {
      default: 'closed',
      isolation_groups: ['ethereum:eth -> arbitrum:eth'],
      blacklist_pairs: ['*:USDC -> bitcoin:*'],
      whitelist_overrides: ['ethereum:USDC -> bitcoin:BTC'],
    },
    cases: [
      ['ethereum:usdc', 'bitcoin:btc', true],
      ['base:usdc', 'bitcoin:btc', false],
      ['bitcoin:btc', 'ethereum:usdc', false],
      ['ethereum:wbtc', 'arbitrum:wbtc', false],
      ['ethereum:eth', 'arbitrum:eth', false],
      ['ethereum:eth', 'bitcoin:btc', false],
    ],
  },
  {
    // Specificity: the exact rule outranks the wildcard one listed before it.
    policy: { default: 'open', isolation_groups: ['*:SEED <-> *:SEED', 'ethereum:SEED -> base:SEED'], blacklist_pairs: [], whitelist_overrides: [] },
    cases: [
      ['ethereum:seed', 'arbitrum:seed', false],
      ['ethereum:seed', 'base:seed', true],
      ['arbitrum:seed', 'ethereum:seed', true],
      ['arbitrum:seed', 'base:seed', true],
      ['bitcoin:btc', 'arbitrum:seed', false],
      ['ethereum:seed', 'ethereum:usdc', false],
      ['arbitrum:seed', 'arbitrum:usdc', false],
      ['bitcoin:btc', 'arbitrum:usdc', true],
    ],
  },
  {
    // A blacklist both ways and a bare *, with a one-way whitelist.
    policy: {
      default: 'open',
      isolation_groups: [],
      blacklist_pairs: ['bitcoin:* <-> *:WBTC', '* -> solana:*'],
      whitelist_overrides: ['bitcoin:BTC -> ethereum:WBTC'],
    },
    cases: [
      ['bitcoin:btc', 'arbitrum:wbtc', false],
      ['arbitrum:wbtc', 'bitcoin:btc', false],
      ['bitcoin:btc', 'ethereum:wbtc', true],
      ['ethereum:wbtc', 'bitcoin:btc', false],
      ['ethereum:usdc', 'solana:sol', false],
      ['solana:sol', 'ethereum:usdc', true],
      ['ethereum:usdc', 'arbitrum:usdc', true],
    ],
  },
  {
    // A one-way isolation binds its source only.
    policy: { default: 'open', isolation_groups: ['bitcoin:BTC -> ethereum:WBTC'], blacklist_pairs: [], whitelist_overrides: [] },
    cases: [
      ['bitcoin:btc', 'ethereum:wbtc', true],
      ['bitcoin:btc', 'arbitrum:wbtc', false],
      ['ethereum:wbtc', 'bitcoin:btc', true],
      ['arbitrum:wbtc', 'ethereum:wbtc', true],
      ['ethereum:wbtc', 'arbitrum:wbtc', true],
    ],
  },
  {
    // Equally specific rules keep their order: the first that names the asset decides.
    policy: { default: 'open', isolation_groups: ['*:SEED -> ethereum:SEED', '*:SEED -> arbitrum:SEED'], blacklist_pairs: [], whitelist_overrides: [] },
    cases: [
      ['base:seed', 'arbitrum:seed', false],
      ['base:seed', 'ethereum:seed', true],
      ['ethereum:seed', 'arbitrum:seed', false],
    ],
  },
  {
    // An asset isolated one way is still reachable; the isolation rule does not open a blacklisted route.
    policy: {
      default: 'open',
      isolation_groups: ['ethereum:SEED <-> arbitrum:SEED'],
      blacklist_pairs: ['ethereum:SEED -> arbitrum:SEED'],
      whitelist_overrides: [],
    },
    cases: [
      ['ethereum:seed', 'arbitrum:seed', false],
      ['arbitrum:seed', 'ethereum:seed', true],
    ],
  },
];

describe('route policy evaluation', () => {
  for (const [i, { policy: rules, cases }] of SDK_AGREEMENT.entries()) {
    test(`agrees with Garden's SDK RouteValidator: policy ${i + 1}`, () => {
      const p = new RoutePolicy(rules);
      for (const [from, to, allowed] of cases) {
        assert.equal(decide(p, from, to).allowed, allowed, `${from} -> ${to} under ${JSON.stringify(rules)}`);
      }
    });
  }

  test("the table's answers are the SDK's own", async () => {
    for (const { policy: rules, cases } of SDK_AGREEMENT) {
      for (const [from, to, allowed] of cases) assert.equal(await sdkAllows(rules, from, to), allowed, `SDK: ${from} -> ${to} under ${JSON.stringify(rules)}`);
    }
  });

  test('agrees with the SDK on random policies and routes', async () => {
    const chains = ['ethereum', 'arbitrum', 'bitcoin', 'base'];
    const symbols = ['wbtc', 'SEED', 'usdc', 'btc'];
    const side = fc.oneof(
      fc.constantFrom('*', '*:*'),
      fc.constantFrom(...chains).map((c) => `${c}:*`),
      fc.constantFrom(...symbols).map((s) => `*:${s}`),
      fc.tuple(fc.constantFrom(...chains), fc.constantFrom(...symbols)).map(([c, s]) => `${c}:${s}`),
    );
    const rule = fc.tuple(side, fc.constantFrom('->', '<->'), side).map(([a, arrow, b]) => `${a} ${arrow} ${b}`);
    const rules = fc.array(rule, { maxLength: 3 });
    const asset = fc.tuple(fc.constantFrom(...chains), fc.constantFrom(...symbols)).map(([c, s]) => `${c}:${s.toLowerCase()}`);
    await fc.assert(
      fc.asyncProperty(
        fc.record({ default: fc.constantFrom('open' as const, 'closed' as const), isolation_groups: rules, blacklist_pairs: rules, whitelist_overrides: rules }),
        asset,
        asset,
        async (policyRules, from, to) => {
          assert.equal(decide(new RoutePolicy(policyRules), from, to).allowed, await sdkAllows(policyRules, from, to));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('without rules every route is open, and closed refuses every route', () => {
    assert.deepEqual(decide(RoutePolicy.open(), 'ethereum:wbtc', 'arbitrum:wbtc'), { allowed: true, by: 'the default policy "open"' });
    assert.deepEqual(decide(policy({ default: 'closed' }), 'ethereum:wbtc', 'arbitrum:wbtc'), { allowed: false, by: 'the default policy "closed"' });
  });

  test('each decision names the rule that made it', () => {
    const p = policy({
      isolation_groups: ['ethereum:SEED <-> arbitrum:SEED'],
      blacklist_pairs: ['*:WBTC -> bitcoin:*'],
      whitelist_overrides: ['ethereum:WBTC -> bitcoin:BTC'],
    });
    assert.deepEqual(decide(p, 'ethereum:seed', 'bitcoin:btc'), { allowed: false, by: 'isolation_groups rule "ethereum:SEED <-> arbitrum:SEED"' });
    assert.deepEqual(decide(p, 'bitcoin:btc', 'arbitrum:seed'), { allowed: false, by: 'isolation_groups rule "ethereum:SEED <-> arbitrum:SEED"' });
    assert.deepEqual(decide(p, 'arbitrum:wbtc', 'bitcoin:btc'), { allowed: false, by: 'blacklist_pairs rule "*:WBTC -> bitcoin:*"' });
    assert.deepEqual(decide(p, 'ethereum:wbtc', 'bitcoin:btc'), { allowed: true, by: 'whitelist_overrides rule "ethereum:WBTC -> bitcoin:BTC"' });
    assert.deepEqual(decide(p, 'ethereum:seed', 'arbitrum:seed'), { allowed: true, by: 'the default policy "open"' });
  });

  test('wildcards: chain:*, *:SYMBOL, *:* and a bare * each match what they say', () => {
    const refused = (rule: string, from: string, to: string) => !decide(policy({ blacklist_pairs: [rule] }), from, to).allowed;
    assert.ok(refused('bitcoin:* -> ethereum:wbtc', 'bitcoin:btc', 'ethereum:wbtc'));
    assert.ok(!refused('bitcoin:* -> ethereum:wbtc', 'litecoin:ltc', 'ethereum:wbtc'));
    assert.ok(refused('*:USDC -> *:WBTC', 'base:usdc', 'arbitrum:wbtc'));
    assert.ok(!refused('*:USDC -> *:WBTC', 'base:usdt', 'arbitrum:wbtc'));
    assert.ok(refused('*:* -> starknet:*', 'bitcoin:btc', 'starknet:wbtc'));
    assert.ok(refused('* -> starknet:*', 'bitcoin:btc', 'starknet:wbtc'));
    assert.ok(!refused('* -> starknet:*', 'starknet:wbtc', 'bitcoin:btc'));
  });

  test('-> covers one way and <-> both', () => {
    const oneWay = policy({ blacklist_pairs: ['ethereum:WBTC -> arbitrum:WBTC'] });
    const bothWays = policy({ blacklist_pairs: ['ethereum:WBTC <-> arbitrum:WBTC'] });
    assert.equal(decide(oneWay, 'ethereum:wbtc', 'arbitrum:wbtc').allowed, false);
    assert.equal(decide(oneWay, 'arbitrum:wbtc', 'ethereum:wbtc').allowed, true);
    assert.equal(decide(bothWays, 'ethereum:wbtc', 'arbitrum:wbtc').allowed, false);
    assert.equal(decide(bothWays, 'arbitrum:wbtc', 'ethereum:wbtc').allowed, false);
  });

  test('check() refuses with route_refused naming the route and the rule', () => {
    const registry = loadRegistry(LOCALNET_REGISTRY_PATH);
    const p = new RoutePolicy(
      { default: 'open', isolation_groups: [], blacklist_pairs: ['arbitrum_localnet:* -> ethereum_localnet:usdc'], whitelist_overrides: [] },
      { registry },
    );
    assert.throws(
      () => p.check(registry.asset('arbitrum_localnet:wbtc')!, registry.asset('ethereum_localnet:usdc')!),
      (err: unknown) =>
        err instanceof AppError &&
        err.code === 'route_refused' &&
        err.message === 'route arbitrum_localnet:wbtc -> ethereum_localnet:usdc is refused by blacklist_pairs rule "arbitrum_localnet:* -> ethereum_localnet:usdc"',
    );
    p.check(registry.asset('ethereum_localnet:wbtc')!, registry.asset('ethereum_localnet:usdc')!);
  });
});

describe('route policy rules are checked, naming the field and the rule', () => {
  const registry = loadRegistry(LOCALNET_REGISTRY_PATH);
  const bad: Array<[string, Partial<RoutePolicyRules>, RegExp]> = [
    ['no direction', { blacklist_pairs: ['ethereum_localnet:wbtc arbitrum_localnet:wbtc'] }, /route_policy\.blacklist_pairs\[0\]: rule "ethereum_localnet:wbtc arbitrum_localnet:wbtc" has no direction/],
    ['an unknown direction', { isolation_groups: ['ethereum_localnet:wbtc <- arbitrum_localnet:wbtc'] }, /isolation_groups\[0\]: rule ".*" has an unknown direction "<-"; use -> \(one way\) or <-> \(both ways\)/],
    ['a fat arrow', { whitelist_overrides: ['ethereum_localnet:wbtc => arbitrum_localnet:wbtc'] }, /whitelist_overrides\[0\]: .* unknown direction "=>"/],
    ['two arrows', { blacklist_pairs: ['a:b -> c:d -> e:f'] }, /blacklist_pairs\[0\]: rule "a:b -> c:d -> e:f" has more than one direction/],
    ['an empty side', { blacklist_pairs: ['ethereum_localnet:wbtc -> '] }, /blacklist_pairs\[0\]: rule ".*": destination side "" must be chain:SYMBOL/],
    ['a chain without symbol', { blacklist_pairs: ['ethereum_localnet -> arbitrum_localnet:wbtc'] }, /source side "ethereum_localnet" must be chain:SYMBOL, with \* for any chain or symbol/],
    ['a partial wildcard', { blacklist_pairs: ['eth*:wbtc -> arbitrum_localnet:wbtc'] }, /source side "eth\*:wbtc"/],
    ['a space inside a side', { blacklist_pairs: ['ethereum_localnet : wbtc -> arbitrum_localnet:wbtc'] }, /source side "ethereum_localnet : wbtc"/],
    ['an unknown chain', { blacklist_pairs: ['bitcoin:BTC -> starknet:*'] }, /blacklist_pairs\[0\]: rule "bitcoin:BTC -> starknet:\*" names chain bitcoin, which is not in the registry/],
    ['an unknown symbol', { isolation_groups: ['ethereum_localnet:SEED <-> arbitrum_localnet:SEED'] }, /isolation_groups\[0\]: rule ".*" names symbol seed, which no asset on ethereum_localnet has/],
    ['a symbol no chain has', { blacklist_pairs: ['*:doge -> *:*'] }, /names symbol doge, which no asset on any chain has/],
  ];
  for (const [name, rules, message] of bad) {
    test(`a rule with ${name} is refused`, () => {
      assert.throws(
        () => new RoutePolicy({ default: 'open', isolation_groups: [], blacklist_pairs: [], whitelist_overrides: [], ...rules }, { where: 'config: route_policy', registry }),
        (err: unknown) => err instanceof ConfigError && message.test(err.message) && err.message.startsWith('config: route_policy.'),
      );
    });
  }

  test('rules naming registry chains and symbols in any case are accepted', () => {
    const p = new RoutePolicy(
      {
        default: 'closed',
        isolation_groups: ['ETHEREUM_LOCALNET:ETH <-> arbitrum_localnet:eth'],
        blacklist_pairs: ['litecoin_localnet:* -> *:USDC', '* -> *:*'],
        whitelist_overrides: ['  ethereum_localnet:WBTC->arbitrum_localnet:WBTC  '],
      },
      { registry },
    );
    assert.equal(p.decide({ chain: 'ethereum_localnet', symbol: 'wbtc' }, { chain: 'arbitrum_localnet', symbol: 'wbtc' }).allowed, true);
  });
});
