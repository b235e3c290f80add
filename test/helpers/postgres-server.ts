// A PostgreSQL server of a test's own (initdb in a temporary directory, a free loopback port, trust
// auth), so that the test may stop and restart it. initdb refuses root, so as root the server runs as
// the `postgres` user.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/localnet/free-port.ts';

export interface PostgresServer {
  /** The `postgres` database of the server. */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Removes the server and its files. */
  destroy(): Promise<void>;
}

/** The directory of the newest installed server binaries (Debian's /usr/lib/postgresql/N/bin), if any. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest && join(root, newest, 'bin');
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql (apt-get install postgresql)');
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, tool), ...args] : [join(bin, tool), ...args];
    execFileSync(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  run('initdb', ['-D', data, '--auth=trust', '--username=postgres', '-E', 'UTF8']);
  const port = await freePort();
  const start = () => {
    run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', `-h 127.0.0.1 -p ${port} -k ${dir}`, '-w', 'start']);
    return Promise.resolve();
  };
  const stop = () => {
    run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    return Promise.resolve();
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: async () => {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
