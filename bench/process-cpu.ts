import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on every Linux Node runs on). */
const TICKS = 100;

/**
 * CPU seconds used so far, on this machine, by the service process (`pid`), the local PostgreSQL
 * server (every `postgres` process, with the backends that ended: the postmaster reaped them) and the
 * anvil nodes, and by this process. On two cores they share, what one of them uses is time the others
 * wait: read the differences of two snapshots over the same window. Empty where /proc is not there.
 */
export function cpuSnapshot(pid: number): Map<string, number> {
  const seconds = new Map<string, number>();
  const add = (group: string, ticks: number) => seconds.set(group, (seconds.get(group) ?? 0) + ticks / TICKS);
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return seconds;
  }
  for (const entry of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // After the name: state, ppid, ... utime (12th), stime, cutime, cstime.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const own = f[11]! + f[12]!;
    if (Number(entry) === pid) add('the service', own);
    else if (name === 'postgres') add('PostgreSQL', own + f[13]! + f[14]!);
    else if (name === 'anvil') add('anvil', own);
  }
  const bench = process.cpuUsage();
  seconds.set('the bench (clients, observers)', (bench.user + bench.system) / 1e6);
  return seconds;
}

/** What each group used between two snapshots, as a share of one core over `seconds`. */
export function cpuBetween(before: Map<string, number>, after: Map<string, number>, seconds: number): string {
  return [...after]
    .map(([group, s]) => [group, s - (before.get(group) ?? 0)] as const)
    .filter(([, used]) => used > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([group, used]) => `${group} ${((100 * used) / seconds).toFixed(0)}%`)
    .join(', ');
}
