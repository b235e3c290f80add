import { hex } from '@scure/base';
import { Address, OutScript } from '@scure/btc-signer';
import { hexToBytes } from '@noble/curves/utils.js';
import type { Db } from '../../store/database.ts';
import { activeSolverAddresses } from '../../store/solver-registry.ts';
import { swapIdsSince } from '../../store/swap-events.ts';
import { bitcoinNetwork } from './network.ts';
import { keyPathAddress } from './wallet-tx.ts';

/**
 * How far before the last refresh each refresh looks: a swap's `created_at` is its transaction's
 * start, so a swap whose creation was under way at the last refresh is still found.
 */
const REFRESH_OVERLAP = '60 seconds';

/**
 * The scripts a Bitcoin-family watcher matches outputs against, by scriptPubKey hex: every open
 * swap's HTLC (its swap_id is the HTLC address), the extra wallet addresses, and the key-path wallet
 * of every solver with a key on the chain (configured, or registered and proven). Loaded once, then
 * refreshed with the swaps created since the last refresh (one indexed query that returns only
 * those), so a block costs one map lookup per output however many swaps exist. Swaps whose redeem
 * or refund is mined are not loaded at start; once loaded, a script stays until the watcher restarts.
 */
export class ScriptIndex {
  private readonly addresses = new Map<string, string>();
  /** Every swap address looked at, valid or not. */
  private readonly seen = new Set<string>();
  /** Solver keys looked at, valid or not. */
  private readonly seenKeys = new Set<string>();
  /** Wallets added whose outputs from before they were watched are still to be read (`markScanned`). */
  private readonly unscanned = new Set<string>();
  private readonly coder: ReturnType<typeof Address>;
  /** The database's time at the last refresh (Postgres text); undefined before the first load. */
  private since: string | undefined;

  constructor(
    private readonly chain: string,
    private readonly network: string,
    walletAddresses: readonly string[] = [],
  ) {
    this.coder = Address(bitcoinNetwork(network));
    for (const address of walletAddresses) {
      if (!this.addWallet(address)) throw new Error(`${chain}: ${address} is not an address of network ${network}`);
    }
  }

  /** Wallets added since they were last marked scanned. */
  get unscannedWallets(): string[] {
    return [...this.unscanned];
  }

  markScanned(addresses: readonly string[]): void {
    for (const address of addresses) this.unscanned.delete(address);
  }

  /** The watched address whose output script is `scriptHex`, if any. */
  addressOf(scriptHex: string): string | undefined {
    return this.addresses.get(scriptHex);
  }

  get size(): number {
    return this.addresses.size;
  }

  /** Adds the swaps created since the last refresh (all open swaps the first time); returns how many scripts were added. */
  async refresh(db: Db): Promise<number> {
    const { swapIds, now } = await swapIdsSince(db, this.chain, this.since, REFRESH_OVERLAP);
    let added = 0;
    for (const address of swapIds) {
      // The overlap returns recent swaps again: decoding an address is the expensive part, skip it.
      if (this.seen.has(address)) continue;
      this.seen.add(address);
      const script = this.scriptOf(address);
      if (script === undefined || this.addresses.has(script)) continue;
      this.addresses.set(script, address);
      added++;
    }
    this.since = now;
    for (const key of await activeSolverAddresses(db, this.chain)) {
      if (this.seenKeys.has(key)) continue;
      this.seenKeys.add(key);
      const wallet = walletOfKey(key, this.network);
      if (wallet !== undefined && this.addWallet(wallet)) added++;
    }
    return added;
  }

  /** Watches a wallet address from now on; false when it is no address of the network. */
  private addWallet(address: string): boolean {
    const script = this.scriptOf(address);
    if (script === undefined) return false;
    if (!this.addresses.has(script)) this.unscanned.add(address);
    this.addresses.set(script, address);
    return true;
  }

  private scriptOf(address: string): string | undefined {
    try {
      return hex.encode(OutScript.encode(this.coder.decode(address)));
    } catch {
      return undefined;
    }
  }
}

/** The key-path wallet address of a solver's x-only key (64 hex); undefined for anything else. */
function walletOfKey(key: string, network: string): string | undefined {
  if (!/^[0-9a-f]{64}$/i.test(key)) return undefined;
  try {
    return keyPathAddress(hexToBytes(key.toLowerCase()), network);
  } catch {
    return undefined;
  }
}
