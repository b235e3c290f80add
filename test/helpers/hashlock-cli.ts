// Running the `hashlock` command in tests: a one-off command, and `hashlock dev` kept running for a
// whole test file.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';

export const BIN = resolve(PACKAGE_ROOT, 'bin/hashlock.js');

/** The environment of a command on `dataDir`: a free API port, quiet logs, the embedded database. */
export function envFor(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
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

export interface RunningDev {
  process: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Ctrl-C, and its exit. */
  stop(): Promise<void>;
}

/** Starts `hashlock dev` on `dataDir` and waits until it has printed its key and written devnet.json. */
export async function startHashlockDev(dataDir: string): Promise<RunningDev> {
  let output = '';
  const dev = spawn(process.execPath, [BIN, 'dev'], { env: envFor(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout.on('data', (d: Buffer) => (output += d.toString()));
  dev.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 120_000;
  while (!(output.includes('API key') && existsSync(join(dataDir, 'devnet.json')))) {
    if (dev.exitCode !== null) throw new Error(`hashlock dev exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`hashlock dev did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    process: dev,
    output: () => output,
    stop: async () => {
      if (dev.exitCode !== null) return;
      const exited = new Promise((r) => dev.once('exit', r));
      dev.kill('SIGINT');
      await exited;
    },
  };
}
