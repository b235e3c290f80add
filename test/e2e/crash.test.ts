// The service process killed outright, three times, while 20 gasless swaps settle: the chains and
// the database live on, the service restarts, and every swap settles with nobody paid twice. Its keys
// are in key files (key_files), decrypted at each start, and none of them, nor their password, is printed.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createDatabase } from '../helpers/stores.ts';
import { openServiceWorld, type ServiceWorld } from './service-process.ts';

const SWAPS = 20;
const KILLS = 3;
const databaseUrl = process.env.DATABASE_URL;
const skip = databaseUrl ? false : process.env.CI ? false : 'DATABASE_URL is not set: the crash test runs on PostgreSQL';
if (skip) console.warn(`\n*** SKIPPING the service crash test: ${skip} ***\n`);

let world: ServiceWorld | undefined;
let database: { url: string; drop: () => Promise<void> } | undefined;

before(async () => {
  if (skip) return;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set: the crash test needs PostgreSQL');
  world = await openServiceWorld({ keyFiles: true });
  database = await createDatabase(databaseUrl, 'hashlock_crash');
});

after(async () => {
  await world?.close();
  await database?.drop();
});

test('the service killed with SIGKILL three times mid-settlement: every swap settles once', { skip, timeout: 300_000 }, async (t) => {
  const mark = await world!.mark();
  const service = await world!.startService(database!.url);
  try {
    const { ids, destinationAmount } = await world!.startSwaps(service, SWAPS);

    // Killed at random moments of the settlement, each time restarted on the same database and
    // chains: the first soon after the initiates were accepted, each next one soon after the
    // restarted service made progress (it first waits out the dead instance's leases, about 3 s).
    const statusesNow = () => Promise.all(ids.map(async (id) => ((await service.call(`/v2/orders/${id}`)) as { status: string }).status));
    const settledAtKill: number[] = [];
    let seen = (await statusesNow()).join();
    for (let kill = 0; kill < KILLS; kill++) {
      if (kill > 0) {
        for (const end = Date.now() + 30_000; (await statusesNow()).join() === seen && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, randomInt(0, 1_000)));
      const read = await statusesNow();
      seen = read.join();
      settledAtKill.push(read.filter((s) => s === 'completed').length);
      const counts: Record<string, number> = {};
      for (const s of read) counts[s] = (counts[s] ?? 0) + 1;
      t.diagnostic(`kill ${kill + 1}: ${JSON.stringify(counts)}`);
      await service.killed();
      await service.restart();
    }
    t.diagnostic(`swaps completed at each kill: ${settledAtKill.join(', ')} of ${SWAPS}`);
    assert.ok(settledAtKill[0]! < SWAPS, 'the first kill came while swaps were in flight');

    await world!.waitCompleted(service, ids, 120_000);
    await world!.assertSettledOnce(mark, SWAPS, destinationAmount);
    await world!.assertNothingSecretPrinted(service, mark);
  } finally {
    await service.killed();
  }
});
