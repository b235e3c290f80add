import { join } from 'node:path';
import { startAnvil } from '../evm/anvil.ts';
import { TronChain } from './chain.ts';
import { serveTronApi } from './http-api.ts';

/**
 * The EVM chain id the local Tron chain runs with: wider than 32 bits, with Tron mainnet's 728126428 as its
 * low 32 bits, so a contract or client that forgets TIP-712's `chainid & 0xffffffff` fails against it.
 */
export const LOCAL_TRON_EVM_CHAIN_ID = 5023093724;
/** Tron's chain id as TIP-712 and order ids see it on the local chain. */
export const LOCAL_TRON_CHAIN_ID = LOCAL_TRON_EVM_CHAIN_ID % 2 ** 32;

/** How often anvil saves its state (it also saves on a clean exit). */
const STATE_INTERVAL_SEC = 2;

export interface TronLocalnetOptions {
  /** Where anvil's state and the transaction index are kept (`anvil-<name>.json`, `tron-<name>.json`); none keeps them in memory. */
  dataDir?: string;
  name?: string;
  /** Port of the HTTP API (a free one by default). */
  port?: number;
  /** Milliseconds between blocks (Tron's 3 s by default); 0 mines a block per accepted transaction, and when asked. */
  blockTimeMs?: number;
  /** Blocks behind the head that count as solidified (the `walletsolidity/` view); Tron's 19 by default. */
  solidifyDepth?: number;
}

export interface TronLocalnet {
  /** The HTTP API's base URL, what `new TronWeb({ fullHost })` takes. */
  url: string;
  port: number;
  chain: TronChain;
  /** The anvil state file, when kept. */
  stateFile?: string;
  /** Mines `blocks` blocks now, at once (no head in between is ever seen). */
  mine(blocks?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A local Tron chain: anvil executing, with Tron's HTTP API and transaction rules in front on a
 * loopback port. Its state (anvil's, and the index of Tron transactions) stays in `dataDir` across restarts.
 */
export async function startTronLocalnet(options: TronLocalnetOptions = {}): Promise<TronLocalnet> {
  const name = options.name ?? 'tron_localnet';
  const stateFile = options.dataDir ? join(options.dataDir, `anvil-${name}.json`) : undefined;
  const anvil = await startAnvil({ chainId: LOCAL_TRON_EVM_CHAIN_ID, stateFile, stateIntervalSec: stateFile ? STATE_INTERVAL_SEC : undefined });
  const blockTimeMs = options.blockTimeMs ?? 3000;
  try {
    await anvil.rpc('evm_setAutomine', [false]);
    const chain = new TronChain({
      anvil,
      indexFile: options.dataDir ? join(options.dataDir, `tron-${name}.json`) : undefined,
      solidifyDepth: options.solidifyDepth,
      mineEachTransaction: blockTimeMs === 0,
    });
    const api = await serveTronApi(chain, options.port);
    const timer = blockTimeMs > 0 ? setInterval(() => void chain.mine().catch(() => undefined), blockTimeMs) : undefined;
    return {
      url: api.url,
      port: api.port,
      chain,
      stateFile,
      mine: (blocks = 1) => chain.mine(blocks),
      async stop() {
        if (timer) clearInterval(timer);
        await new Promise<void>((resolve) => api.server.close(() => resolve()));
        // anvil saves no pending transactions: the ones accepted since the last block go into one now.
        await chain.mine().catch(() => undefined);
        await anvil.stop();
      },
    };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}
