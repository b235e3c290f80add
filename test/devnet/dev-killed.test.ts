// `hashlock dev` killed outright (kill -9) must not leave its chains running: they held 8545 and
// 8546, so the next `npm start` put its chains where Garden's SDK cannot reach them, and litecoind
// held its data directory's lock. Its chains end with it; and a node that an earlier run left behind
// anyway (another platform, an older version) is stopped by the next start.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startAnvil } from '../../src/localnet/evm/anvil.ts';
import { findLitecoind, startLitecoind } from '../../src/localnet/bitcoin/litecoind.ts';
import { portIsFree } from '../../src/localnet/free-port.ts';
import { processesWith } from '../../src/localnet/node-process.ts';
import { startHashlockDev, type RunningDev } from '../helpers/hashlock-cli.ts';

const PORTS = [8545, 8546];
const taken = (await Promise.all(PORTS.map(portIsFree))).some((free) => !free);
const skip = process.platform !== 'linux' ? 'the kernel ties the chains to their parent on Linux only' : taken && !process.env.CI ? `port 8545 or 8546 is in use here (a running npm start?)` : false;
if (skip) console.warn(`\n*** SKIPPING the hashlock dev kill test: ${skip} ***\n`);

const dir = mkdtempSync(join(tmpdir(), 'hashlock-dev-killed-'));
const running: RunningDev[] = [];
after(async () => {
  for (const dev of running) await dev.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** The chain nodes of the data directory now running: its two anvils and, where installed, litecoind. */
const chainProcesses = () => [
  ...processesWith(join(dir, 'anvil-ethereum_localnet.json')),
  ...processesWith(join(dir, 'anvil-arbitrum_localnet.json')),
  ...processesWith(`-datadir=${join(dir, 'litecoin')}`),
];
const expectedNodes = findLitecoind() ? 3 : 2;

const chainLine = (output: string, key: string) => output.split('\n').find((line) => line.includes('Chain') && line.includes(key)) ?? '';

test('hashlock dev killed with SIGKILL: its chains stop, and the next start gets 8545 and 8546 again', { skip, timeout: 600_000 }, async (t) => {
  assert.ok(!taken, 'ports 8545 and 8546 are free for this test');
  const first = await startHashlockDev(dir, { wellKnownPorts: true });
  running.push(first);
  const nodes = chainProcesses();
  assert.equal(nodes.length, expectedNodes, `the chains of the data directory run: ${first.output()}`);
  assert.match(chainLine(first.output(), 'ethereum_localnet'), /127\.0\.0\.1:8545 /);

  first.process.kill('SIGKILL');
  await first.exited;
  const killedAt = Date.now();
  for (const end = Date.now() + 30_000; chainProcesses().length > 0; await new Promise((r) => setTimeout(r, 50))) {
    assert.ok(Date.now() < end, `the chains outlived hashlock dev: ${chainProcesses().join(', ')} still run`);
  }
  t.diagnostic(`${nodes.length} chain nodes ended ${Date.now() - killedAt} ms after hashlock dev was killed`);

  const second = await startHashlockDev(dir, { wellKnownPorts: true });
  running.push(second);
  assert.match(chainLine(second.output(), 'ethereum_localnet'), /127\.0\.0\.1:8545 /, second.output());
  assert.match(chainLine(second.output(), 'arbitrum_localnet'), /127\.0\.0\.1:8546 /, second.output());
  assert.doesNotMatch(second.output(), /is taken/);
  await second.stop();
  assert.equal(second.process.exitCode, 0, second.output());
  assert.deepEqual(chainProcesses(), [], 'a clean stop stops every chain');
});

test('a node an earlier run left behind is stopped by the next start, which gets its port and data directory', { skip, timeout: 600_000 }, async () => {
  // As a platform without the kernel's help, or an older version, would leave them: on the
  // well-known port, holding the data directory.
  const strayAnvil = await startAnvil({ chainId: 31337, port: 8545, stateFile: join(dir, 'anvil-ethereum_localnet.json') });
  const strayLitecoind = findLitecoind() ? await startLitecoind({ dataDir: join(dir, 'litecoin') }) : undefined;
  const strays = chainProcesses();
  assert.equal(strays.length, strayLitecoind ? 2 : 1);

  const dev = await startHashlockDev(dir, { wellKnownPorts: true });
  running.push(dev);
  assert.match(chainLine(dev.output(), 'ethereum_localnet'), /127\.0\.0\.1:8545 /, dev.output());
  assert.match(dev.output(), new RegExp(`ethereum_localnet: stopped the node an earlier run left running \\(pid ${strayAnvil.pid}\\)`));
  if (strayLitecoind) assert.match(dev.output(), /litecoin_localnet: stopped the node an earlier run left running/);
  for (const pid of strays) assert.ok(!chainProcesses().includes(pid), `the stray ${pid} was stopped`);
  assert.equal(chainProcesses().length, expectedNodes);
  await dev.stop();
  assert.equal(dev.process.exitCode, 0, dev.output());
});
