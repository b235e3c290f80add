import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let setpriv: string | null | undefined;
/** util-linux's `setpriv` (every Debian system has it), or null elsewhere. */
function findSetpriv(): string | null {
  if (setpriv === undefined) {
    const found = process.platform === 'linux' ? spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }) : undefined;
    setpriv = found?.status === 0 && found.stdout.trim() ? found.stdout.trim() : null;
  }
  return setpriv;
}

/**
 * Spawns a local chain's node (anvil, litecoind) so that it ends with this process: on Linux the
 * kernel sends it SIGTERM when its parent dies, however it dies (`kill -9` included), through
 * `setpriv --pdeathsig`, which then becomes the node (same pid). A node so ended saves its state as on
 * any SIGTERM. Where that is not available, `stopLeftovers` at the next start cleans up.
 */
export function spawnNode(binary: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const tie = findSetpriv();
  return tie ? spawn(tie, ['--pdeathsig', 'TERM', '--', binary, ...args], options) : spawn(binary, args, options);
}

/** The ids of this machine's processes whose command line holds `argument` as one of its words (Linux: /proc). */
export function processesWith(argument: string): number[] {
  if (process.platform !== 'linux') return [];
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (argv.includes(argument)) found.push(Number(entry));
  }
  return found;
}

/** Whether the process runs (a zombie no longer does: nobody may have reaped it yet, as in a container whose init does not). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

/** What `hashlock dev` prints of the leftovers it stopped. */
export const leftoverNotes = (chainKey: string, pids: readonly number[]): string[] =>
  pids.length > 0 ? [`${chainKey}: stopped the node an earlier run left running (pid ${pids.join(', ')})`] : [];

/**
 * Stops the nodes an earlier run left behind (it died before it could stop them) that hold
 * `argument`, which names this data directory's state (anvil's `--state` file, litecoind's
 * `-datadir=`): SIGTERM, so each saves its state, then SIGKILL after `graceMs`. They hold the
 * well-known ports and the data directory's locks that this start needs. Returns their ids.
 */
export async function stopLeftovers(argument: string, graceMs = 15_000): Promise<number[]> {
  const pids = processesWith(argument);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + graceMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of pids.filter(alive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const end = Date.now() + 5_000; pids.some(alive) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  return pids;
}
