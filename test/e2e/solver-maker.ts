// A market maker's `hashlock solver` for the e2e tests and benches: registered with the service's operator, then
// run as its own process with its own key, config and data directory, and nothing of the service's
// (not its database, not its keys) in its environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Hex } from 'viem';
import { DEV_CONFIG_PATH, PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { openStore } from '../../src/store/database.ts';
import { registerSolver } from '../../src/store/solver-registry.ts';

const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');

export interface MakerProcess {
  id: string;
  key: Hex;
  child: ChildProcess;
  /** Its data directory (its PGlite under `pglite/`). */
  dataDir: string;
  /** Everything its runs printed so far. */
  output(): string;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again (after a kill), on the same data directory. */
  restart(): Promise<void>;
  /** Kills it and removes its directory. */
  remove(): Promise<void>;
}

export interface MakerOptions {
  id: string;
  key: Hex;
  /** The service's API. */
  serviceApi: string;
  /** The solver key the operator issued (`registerMaker`). */
  apiKey: string;
  /** Its `chains` config: its own access to each chain. */
  chains: Record<string, object>;
  /** Its `strategies` config. */
  strategies: object[];
  /** Its registry file: the service's (its block times and timelocks; the localnet registry by default). */
  registry?: string;
  /** Settings of its config over these (`solver_rule2_margin_seconds`, say). */
  config?: Record<string, unknown>;
}

/** The operator registers the maker on the service's PostgreSQL database: its solver key. */
export async function registerMaker(serviceDatabaseUrl: string, id: string): Promise<string> {
  const store = await openStore({ databaseUrl: serviceDatabaseUrl });
  return (await registerSolver(store.db, { id, name: id }).finally(() => store.close())).key;
}

/** Starts the maker's process; resolves once it runs (has proven its addresses and registered its pairs). */
export async function startMakerProcess(o: MakerOptions): Promise<MakerProcess> {
  const dir = mkdtempSync(join(tmpdir(), `hashlock-${o.id}-`));
  const dev = JSON.parse(readFileSync(DEV_CONFIG_PATH, 'utf8')) as { prices: Record<string, number> };
  const configPath = join(dir, 'solver.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      registry: o.registry ?? resolve(PACKAGE_ROOT, 'config/registry.localnet.json'),
      data_dir: join(dir, 'data'),
      log_level: 'info',
      prices: dev.prices,
      chains: o.chains,
      strategies: o.strategies,
      ...o.config,
    }),
  );
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('HASHLOCK_')));
  Object.assign(env, { HASHLOCK_SOLVER_KEY: o.key, HASHLOCK_SOLVER_API_KEY: o.apiKey });
  let output = '';
  const spawnOne = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [BIN, 'solver', '-c', configPath, '--service', o.serviceApi], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let own = '';
    const collect = (d: Buffer) => {
      own += d.toString();
      output += d.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    // A bound for a start that hangs, not a timing: a loaded 2-core machine has taken over 60 s.
    for (const end = Date.now() + 150_000; !own.includes(`hashlock solver ${o.id} running`); await new Promise((r) => setTimeout(r, 50))) {
      if (child.exitCode !== null || Date.now() > end) {
        // Not left running: its pipes would keep the test process alive after the test failed.
        child.kill('SIGKILL');
        throw new Error(`hashlock solver ${o.id} did not start:\n${output}`);
      }
    }
    return child;
  };
  const maker: MakerProcess = {
    id: o.id,
    key: o.key,
    child: await spawnOne(),
    dataDir: join(dir, 'data'),
    output: () => output,
    kill: async () => {
      if (maker.child.exitCode !== null || maker.child.signalCode !== null) return;
      const exited = new Promise((r) => maker.child.once('exit', r));
      maker.child.kill('SIGKILL');
      await exited;
    },
    restart: async () => {
      maker.child = await spawnOne();
    },
    remove: async () => {
      await maker.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return maker;
}
