// Running the `hashlock` command in tests: a one-off command, and `hashlock dev` kept running for a
// test file (a devnet its tests share) or for one test (a devnet it restarts, kills or keys its own way).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';
import { writeTestRegistry } from './test-registry.ts';

export const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');

/** The environment of a command on `dataDir`: a free API port, quiet logs, the embedded database. */
export function envFor(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...extra };
  delete env.DATABASE_URL;
  return env;
}

/** Runs a command to its end; resolves with its exit code and output. */
export function runHashlock(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** devnet.json as `hashlock dev` writes it: the fields the tests read. */
export interface Devnet {
  api_url: string;
  app_key: string;
  chains: Record<string, { chain_id: number; rpc_url: string; contracts: Record<string, string> }>;
  accounts: { user: { address: string; private_key: string } };
}

export interface RunningDev {
  process: ChildProcess;
  /** devnet.json as this run wrote it. */
  devnet: Devnet;
  /** Everything it printed so far. */
  output(): string;
  /** Its exit, however it comes: its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Ctrl-C, and its exit; resolves with its exit code. */
  stop(): Promise<number | null>;
}

export interface StartDevOptions {
  /** More environment (a solver key of its own, say). */
  env?: NodeJS.ProcessEnv;
  /** In its own process group, so that a signal to the group reaches the service and its chain nodes at once, as Ctrl-C in a terminal does. */
  ownGroup?: boolean;
  /**
   * The chains listen on their well-known local ports (8545, 8546, ...) where free, as `npm start`
   * does. Off by default: a test's devnet takes free ports, so it runs beside Garden's SDK tests
   * (which need 8545 and 8546) and beside other devnets.
   */
  wellKnownPorts?: boolean;
}

/**
 * Starts `hashlock dev` on `dataDir` with the test registry (test/helpers/test-registry.ts: Litecoin
 * mines every 2 s, Tron every 1 s, timelocks as long in seconds as the dev registry's), and resolves
 * once it has printed its key, which it does after writing devnet.json.
 */
export async function startHashlockDev(dataDir: string, options: StartDevOptions = {}): Promise<RunningDev> {
  const env = envFor(dataDir, { HASHLOCK_REGISTRY: writeTestRegistry(dataDir), ...options.env });
  const args = [BIN, 'dev', ...(options.wellKnownPorts ? [] : ['--free-ports'])];
  const dev = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownGroup ?? false });
  let output = '';
  const exited = new Promise<number | null>((r) => dev.once('exit', (code) => r(code)));
  await new Promise<void>((started, failed) => {
    const timer = setTimeout(() => {
      dev.kill('SIGKILL');
      failed(new Error(`hashlock dev did not start:\n${output}`));
    }, 300_000);
    const read = (d: Buffer) => {
      output += d.toString();
      if (output.includes('API key')) {
        clearTimeout(timer);
        started();
      }
    };
    dev.stdout.on('data', read);
    dev.stderr.on('data', read);
    void exited.then(() => {
      clearTimeout(timer);
      failed(new Error(`hashlock dev exited early:\n${output}`));
    });
  });
  return {
    process: dev,
    devnet: JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as Devnet,
    output: () => output,
    exited,
    stop: async () => {
      if (dev.exitCode === null && dev.signalCode === null) dev.kill('SIGINT');
      return exited;
    },
  };
}
