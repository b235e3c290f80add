import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from '../free-port.ts';
import { spawnNode } from '../node-process.ts';

/** A running anvil node (a real local EVM chain) that this process started. */
export interface AnvilNode {
  chainId: number;
  rpcUrl: string;
  port: number;
  /** The node's process id. */
  pid: number;
  /** A JSON-RPC call to the node (anvil_* and evm_* methods included). */
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

async function jsonRpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** The anvil binary that @foundry-rs/anvil installs for this platform. */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const platform = `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  const pkg = dirname(require.resolve(`@foundry-rs/anvil-${platform}/package.json`));
  const binary = join(pkg, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new Error(`anvil is not installed for ${platform} (${binary})`);
  return binary;
}

/**
 * Starts anvil on 127.0.0.1 with `chainId`, on `port` (a free one by default), and resolves once
 * it answers JSON-RPC. `blockTimeSec` mines on an interval; without it, every transaction mines a
 * block at once. With `stateFile` the chain starts from the state saved there and saves it on exit,
 * and every `stateIntervalSec` too: anvil killed outright loses at most that much of its chain.
 */
export async function startAnvil(options: { chainId: number; port?: number; blockTimeSec?: number; stateFile?: string; stateIntervalSec?: number }): Promise<AnvilNode> {
  const port = options.port ?? (await freePort());
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(options.chainId), '--silent'];
  if (options.blockTimeSec !== undefined) args.push('--block-time', String(options.blockTimeSec));
  if (options.stateFile) args.push('--state', options.stateFile);
  if (options.stateFile && options.stateIntervalSec) args.push('--state-interval', String(options.stateIntervalSec));
  const child: ChildProcess = spawnNode(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}: ${stderr}`);
    try {
      await jsonRpc(rpcUrl, 'eth_chainId');
      break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`anvil did not answer on ${rpcUrl} within 30 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    chainId: options.chainId,
    rpcUrl,
    port,
    pid: child.pid!,
    rpc: (method, params) => jsonRpc(rpcUrl, method, params),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
