import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { LiteSVM } from 'litesvm';
import { address, createKeyPairSignerFromPrivateKeyBytes, getBase58Decoder, lamports, type KeyPairSigner } from '@solana/kit';
import type { Logger } from 'pino';
import { Ledger } from './ledger.ts';
import { ChainDirectory } from './persistence.ts';
import { createRpcMethods } from './rpc-methods.ts';
import { createRpcServer } from './rpc-server.ts';
import { SignatureIndex } from './signature-index.ts';
import { SlotClock } from './slot-clock.ts';

export interface SolanaLocalnetOptions {
  /** Where the chain is kept across restarts; without it the chain lives in memory only. */
  dataDir?: string;
  /** The loopback port to listen on; 0 or absent means a free one. */
  port?: number;
  /** Milliseconds per slot (400 by default, as on mainnet); 0 stops the clock: slots move only with advanceSlots. */
  slotMs?: number;
  /** Milliseconds between saves to dataDir (2,000 by default). */
  saveIntervalMs?: number;
  log?: Logger;
}

/** A running local Solana chain: LiteSVM behind Solana's JSON-RPC on 127.0.0.1. */
export interface SolanaLocalnet {
  rpcUrl: string;
  port: number;
  dataDir: string | undefined;
  /**
   * The runtime itself, for the devnet to install programs and accounts (addProgram, setAccount).
   * Changes made through it are saved with the next save like any other state.
   */
  svm: LiteSVM;
  /** The faucet that pays requestAirdrop. */
  faucet: string;
  /** The slot transactions execute in now. */
  slot(): number;
  /** Moves the chain `count` slots on at once (tests, and a devnet that warps time). */
  advanceSlots(count: number): void;
  /** Writes the chain to dataDir now (a no-op without one). */
  save(): void;
  /** Stops the clock and the server, then saves. */
  stop(): Promise<void>;
}

/** The faucet's balance on a new chain: 500 million SOL. */
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;
const FAUCET_SEED = createHash('sha256').update('hashlock solana localnet faucet').digest();
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

/** The validator's rules, which a snapshot may not carry: real signature checks, this module's blockhash window, no LiteSVM history (the signature index replaces it). */
function configure(svm: LiteSVM): LiteSVM {
  return svm.withSigverify(true).withBlockhashCheck(false).withTransactionHistory(0n);
}

function newChain(faucet: KeyPairSigner): LiteSVM {
  const svm = configure(new LiteSVM());
  svm.setAccount({ address: faucet.address, lamports: lamports(FAUCET_LAMPORTS), programAddress: SYSTEM_PROGRAM, executable: false, data: new Uint8Array(), space: 0n });
  return svm;
}

export async function startSolanaLocalnet(options: SolanaLocalnetOptions = {}): Promise<SolanaLocalnet> {
  const slotMs = options.slotMs ?? 400;
  const saveIntervalMs = options.saveIntervalMs ?? 2000;
  const log = options.log;
  const faucet = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(FAUCET_SEED));
  const directory = options.dataDir === undefined ? undefined : new ChainDirectory(options.dataDir);
  const saved = directory?.load();
  const svm = saved ? configure(saved.svm) : newChain(faucet);
  const genesisHash = saved?.genesisHash ?? getBase58Decoder().decode(randomBytes(32));
  const clock = new SlotClock(svm, saved?.slots ?? []);
  const index = new SignatureIndex(saved?.transactions ?? []);
  // A restarted chain goes on from the slot after the one it saved.
  if (saved) clock.tick();
  const ledger = new Ledger(svm, clock, index, faucet);

  const save = () => {
    if (!directory) return;
    const newTransactions = index.takeUnsaved();
    try {
      directory.save(svm, { genesisHash, slots: clock.history(), newTransactions });
    } catch (err) {
      index.restoreUnsaved(newTransactions);
      throw err;
    }
  };

  const server = createRpcServer(createRpcMethods({ svm, ledger, clock, index, genesisHash }), log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const slotTimer = slotMs > 0 ? setInterval(() => clock.tick(), slotMs) : undefined;
  const saveTimer = directory
    ? setInterval(() => {
        try {
          save();
        } catch (err) {
          log?.error({ err, dataDir: options.dataDir }, 'solana localnet: save failed');
        }
      }, saveIntervalMs)
    : undefined;
  save();
  log?.info({ port, slot: clock.slot, dataDir: options.dataDir, transactions: index.size }, 'solana localnet listening');

  let stopping: Promise<void> | undefined;
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    port,
    dataDir: options.dataDir,
    svm,
    faucet: faucet.address,
    slot: () => clock.slot,
    advanceSlots: (count) => {
      for (let i = 0; i < count; i++) clock.tick();
    },
    save,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        clearInterval(slotTimer);
        clearInterval(saveTimer);
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => save())),
  };
}
