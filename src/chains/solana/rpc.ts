import { createSolanaRpc } from '@solana/kit';

/**
 * Recent blockhashes for building transactions, fetched with @solana/kit and reused for a few
 * seconds: a blockhash stays valid for about a minute, and one per order would flood the RPC.
 */
export class RecentBlockhash {
  private readonly rpc;
  private cached: { blockhash: string; until: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    url: string,
    private readonly reuseMs = 10_000,
  ) {
    this.rpc = createSolanaRpc(url);
  }

  async get(): Promise<string> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.blockhash;
    this.pending ??= this.rpc
      .getLatestBlockhash({ commitment: 'confirmed' })
      .send()
      .then(({ value }) => {
        this.cached = { blockhash: value.blockhash, until: Date.now() + this.reuseMs };
        return value.blockhash;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }
}
