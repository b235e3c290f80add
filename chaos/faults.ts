// Each fault of the schedule done to the world, at its moment, and undone after its duration: what
// happened when is kept, for the report and for the checker (a 503 is allowed while a fault lasts).
import pg from 'pg';
import type { NodeName, PlannedFault } from './schedule.ts';
import { describeFault } from './schedule.ts';
import type { ChaosWorld } from './world.ts';

export interface FaultRecord {
  planned: PlannedFault;
  /** Wall-clock ms when it began and when it was undone (the restarted process answering). */
  from: number;
  to: number;
  note: string;
  error?: string;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service database's connections terminated every 0.5 s for `ms`; how many in all. */
async function terminateConnections(w: ChaosWorld, ms: number): Promise<number> {
  const admin = new pg.Client({ connectionString: w.postgres.url });
  await admin.connect();
  const name = new URL(w.databaseUrl).pathname.slice(1);
  let total = 0;
  try {
    for (const end = Date.now() + ms; Date.now() < end; await pause(500)) {
      const { rows } = await admin.query<{ n: number }>(
        'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t',
        [name],
      );
      total += rows[0]!.n;
    }
  } finally {
    await admin.end();
  }
  return total;
}

/**
 * A reorganisation `depth` blocks deep, within the confirmation target: anvil goes back to a snapshot
 * taken `depth` blocks ago and mines `depth + 1` blocks at once (the transactions of the dropped blocks
 * are gone unless their senders send them again); Litecoin invalidates the block `depth - 1` below its
 * tip (its transactions go back to the mempool) and mines `depth + 1` blocks on the block before.
 */
async function reorg(w: ChaosWorld, node: 'eth' | 'arb' | 'ltc', depth: number): Promise<string> {
  if (node === 'ltc') {
    const rpc = w.ltc.node.rpc;
    const tip = await rpc.getBlockCount();
    const hash = await rpc.getBlockHash(tip - depth + 1);
    await rpc.call('invalidateblock', [hash]);
    await w.ltc.node.mine(depth + 1);
    return `height ${tip} -> ${await rpc.getBlockCount()}`;
  }
  const c = node === 'eth' ? w.eth : w.arb;
  const from = await c.client.getBlockNumber();
  const snapshot = (await c.node.rpc('evm_snapshot', [])) as string;
  for (const end = Date.now() + 30_000; (await c.client.getBlockNumber()) < from + BigInt(depth) && Date.now() < end; ) await pause(100);
  const reached = await c.client.getBlockNumber();
  await c.node.rpc('evm_revert', [snapshot]);
  await c.node.rpc('anvil_mine', [`0x${(depth + 1).toString(16)}`]);
  return `block ${reached} -> ${await c.client.getBlockNumber()} on another branch`;
}

/** Runs one fault to its end; never throws (a fault that fails is recorded with its error). */
export async function runFault(w: ChaosWorld, planned: PlannedFault, log: (line: string) => void): Promise<FaultRecord> {
  const record: FaultRecord = { planned, from: Date.now(), to: Date.now(), note: '' };
  const f = planned.fault;
  log(`fault: ${describeFault(f)}${planned.durationMs ? ` for ${(planned.durationMs / 1000).toFixed(1)} s` : ''}`);
  const proxy = (node: NodeName) => w.world.proxies[node]!;
  try {
    switch (f.kind) {
      case 'node-cut':
        proxy(f.node).cut();
        try {
          await pause(planned.durationMs);
        } finally {
          proxy(f.node).restore();
        }
        break;
      case 'node-slow':
        proxy(f.node).slow(f.delayMs);
        try {
          await pause(planned.durationMs);
        } finally {
          proxy(f.node).fast();
        }
        break;
      case 'pg-terminate':
        record.note = `${await terminateConnections(w, planned.durationMs)} connections terminated`;
        break;
      case 'pg-restart':
        await w.postgres.stop();
        try {
          await pause(planned.durationMs);
        } finally {
          await w.postgres.start();
        }
        break;
      case 'kill-instance':
        await w.instances[f.instance].killed();
        await pause(planned.durationMs);
        await w.restartInstance(f.instance);
        break;
      case 'kill-maker':
      case 'maker-outage':
        await w.maker.kill();
        await pause(planned.durationMs);
        await w.restartMaker();
        break;
      case 'reorg':
        record.note = await reorg(w, f.node, f.depth);
        break;
    }
  } catch (err) {
    record.error = String(err).slice(0, 500);
    log(`fault ${describeFault(f)} failed: ${record.error}`);
  }
  record.to = Date.now();
  log(`fault over: ${describeFault(f)} (${((record.to - record.from) / 1000).toFixed(1)} s)${record.note ? `: ${record.note}` : ''}`);
  return record;
}
