// When each block first showed up at its node, by the wall clock. The local chains' own block times
// run ahead of it (regtest's and anvil's mined in bursts at setup must each be later than the one
// before), so the checker times fundings with this clock, which it keeps by asking every node for
// its head twice a second, straight (never through the faults' proxies).
import type { PublicClient } from 'viem';
import { solanaRpc } from '../src/chains/solana/rpc.ts';
import type { ChaosWorld } from './world.ts';

export class BlockClock {
  private readonly seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private lastSlot = -1n;

  constructor(
    private readonly w: ChaosWorld,
    private readonly tronAnvil: PublicClient,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.poll()).catch(() => undefined);
    }, 500);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
  }

  /** When the block (`chain:hash`, or `solana_localnet:slot`) was first seen; undefined when never. */
  timeOf(chain: string, block: string): number | undefined {
    return this.seen.get(`${chain}:${block.toLowerCase()}`);
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    await Promise.all([
      this.evm('ethereum_localnet', this.w.eth.client, now),
      this.evm('arbitrum_localnet', this.w.arb.client, now),
      this.evm('tron_localnet', this.tronAnvil, now),
      this.litecoin(now),
      this.solana(now),
    ]);
  }

  private mark(chain: string, block: string, now: number): boolean {
    const key = `${chain}:${block.toLowerCase()}`;
    if (this.seen.has(key)) return false;
    this.seen.set(key, now);
    return true;
  }

  /** The head and each new block below it down to one already seen. */
  private async evm(chain: string, client: PublicClient, now: number): Promise<void> {
    let block = await client.getBlock({ blockTag: 'latest' });
    for (let depth = 0; depth < 100 && this.mark(chain, block.hash, now) && block.number > 0n; depth++) block = await client.getBlock({ blockHash: block.parentHash });
  }

  private async litecoin(now: number): Promise<void> {
    const rpc = this.w.ltc.node.rpc;
    let hash = await rpc.call<string>('getbestblockhash');
    for (let depth = 0; depth < 100 && this.mark('litecoin_localnet', hash, now); depth++) {
      const header = await rpc.call<{ previousblockhash?: string }>('getblockheader', [hash]);
      if (!header.previousblockhash) break;
      hash = header.previousblockhash;
    }
  }

  private async solana(now: number): Promise<void> {
    const slot = await solanaRpc(this.w.sol.rpcUrl).getSlot({ commitment: 'confirmed' }).send();
    for (let s = this.lastSlot < 0n ? slot : this.lastSlot + 1n; s <= slot; s++) this.mark('solana_localnet', String(s), now);
    this.lastSlot = slot;
  }
}
