import { spawnSync, type ChildProcess } from 'node:child_process';
import { spawnNode } from '../node-process.ts';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BitcoinRpc, BitcoinRpcError } from '../../chains/bitcoin/rpc.ts';
import { freePort } from '../free-port.ts';

/** A Litecoin Core regtest node (a real local Bitcoin-family chain) that this process started. */
export interface LitecoinNode {
  rpcUrl: string;
  rpcPort: number;
  /** The node's cookie file: the RPC credentials. */
  cookieFile: string;
  dataDir: string;
  rpc: BitcoinRpc;
  /** Mines `blocks` blocks to `address` (a fresh address of the node's wallet by default); returns their hashes. */
  mine(blocks: number, address?: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** The height from which regtest enforces every soft fork the HTLC needs (CSV activates at 432). */
const ACTIVE_HEIGHT = 500;

/** The `litecoind` binary on the PATH, or undefined when Litecoin Core is not installed. */
export function findLitecoind(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v litecoind'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path ? path : undefined;
}

/**
 * Starts `litecoind -regtest` on free loopback ports and resolves once it answers RPC, with a wallet
 * named `dev` loaded. MWEB is never activated (`-vbparams=mweb:-2:0`), so regtest can mine; taproot is
 * active from the start, and a fresh chain is mined to height 500 so that CSV is too. Without `dataDir` the node lives in a temporary directory removed on stop; `extraArgs` are added to the command line.
 */
export async function startLitecoind(options: { dataDir?: string; extraArgs?: readonly string[] } = {}): Promise<LitecoinNode> {
  const binary = findLitecoind();
  if (!binary) throw new Error('litecoind is not on the PATH: install Litecoin Core (Debian: apt-get install litecoind)');
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hashlock-ltc-'));
  mkdirSync(dataDir, { recursive: true });
  const rpcPort = await freePort();
  const p2pPort = await freePort();
  const args = [
    '-regtest',
    `-datadir=${dataDir}`,
    '-server',
    '-listen=1',
    '-bind=127.0.0.1',
    `-port=${p2pPort}`,
    '-rpcbind=127.0.0.1',
    '-rpcallowip=127.0.0.1',
    `-rpcport=${rpcPort}`,
    '-vbparams=mweb:-2:0',
    '-txindex=1',
    '-fallbackfee=0.0002',
    '-printtoconsole=0',
    '-dnsseed=0',
    '-discover=0',
    ...(options.extraArgs ?? []),
  ];
  const child: ChildProcess = spawnNode(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const rpcUrl = `http://127.0.0.1:${rpcPort}`;
  const cookieFile = join(dataDir, 'regtest', '.cookie');
  const rpc = new BitcoinRpc({ url: rpcUrl, auth: { cookieFile }, timeoutMs: 60_000 });
  const stop = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        if (temporary) rmSync(dataDir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', done);
      child.kill('SIGTERM');
    });

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`litecoind exited with ${child.exitCode}: ${stderr}`);
    try {
      await rpc.getBlockCount();
      break;
    } catch (err) {
      // not listening yet, no cookie yet, or still warming up
      if (err instanceof BitcoinRpcError && err.code !== -28 && err.code !== 401) throw err;
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`litecoind did not answer on ${rpcUrl} within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    const wallets = await rpc.call<string[]>('listwallets');
    if (!wallets.includes('dev')) {
      try {
        await rpc.call('loadwallet', ['dev']);
      } catch {
        await rpc.call('createwallet', ['dev']);
      }
    }
    // Litecoin's regtest enforces CSV (the HTLC refund leaf) only from height 432: a fresh chain is
    // mined past it, which also gives the dev wallet mature coins.
    const height = await rpc.getBlockCount();
    if (height < ACTIVE_HEIGHT) {
      const to = await rpc.call<string>('getnewaddress', ['', 'bech32']);
      await rpc.call('generatetoaddress', [ACTIVE_HEIGHT - height, to]);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    rpcUrl,
    rpcPort,
    cookieFile,
    dataDir,
    rpc,
    mine: async (blocks, address) => {
      const to = address ?? (await rpc.call<string>('getnewaddress', ['', 'bech32']));
      return rpc.call<string[]>('generatetoaddress', [blocks, to]);
    },
    stop,
  };
}
