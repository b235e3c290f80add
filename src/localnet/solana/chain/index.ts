/**
 * A local Solana chain: LiteSVM (the Agave runtime, in process) behind Solana's JSON-RPC 2.0 over
 * HTTP on 127.0.0.1, for `hashlock dev` and the tests.
 *
 * Slots: one every slotMs; a transaction is processed in the current slot, confirmed one slot later
 * and finalized 32 slots later; blockhashes stay valid for 150 slots. Reads that take a commitment
 * honour it for transactions and signatures (getSignatureStatuses, getSignaturesForAddress,
 * getTransaction, getLatestBlockhash, getSlot); account reads (getAccountInfo, getBalance,
 * getMultipleAccounts, getProgramAccounts, getTokenAccountBalance) return the latest state at every
 * commitment: LiteSVM keeps one state, not one per slot, so a confirmed read may show a transaction
 * that is only processed.
 *
 * The data directory holds a LiteSVM snapshot, the landed transactions (transactions.jsonl, which
 * only grows and is read whole at start) and meta.json; it is saved every saveIntervalMs and at
 * stop, so a kill -9 loses at most that much.
 *
 * Known differences from a validator's RPC: no WebSocket subscriptions (kit's
 * sendAndConfirmTransactionFactory needs them; poll getSignatureStatuses instead); no getBlock;
 * jsonParsed answers are not parsed (accounts come back base64, transactions as json);
 * base64+zstd is refused; getFeeForMessage answers null for a durable-nonce message;
 * preflight and simulation run on the latest state whatever their commitment;
 * simulateTransaction omits loadedAccountsDataSize; getVersion reports the runtime's crate version
 * (4.3.0) and feature-set 0; rentEpoch is always u64::MAX.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Clock, LiteSVM } from 'litesvm';
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
  /**
   * Programs (SBF ELF bytes) installed at every start, new chain or restarted, before the port
   * opens: a restarted chain runs the ELF given now, not the one it saved.
   */
  programs?: readonly { programId: string; elf: Uint8Array }[];
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
  /** Stops the slot clock until the returned function is called: slots then move only with advanceSlots. */
  hold(): () => void;
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

/** A new chain starts at slot 0, as solana-test-validator's does (LiteSVM's own clock starts at a mainnet-like slot). */
function newChain(faucet: KeyPairSigner): LiteSVM {
  const svm = configure(new LiteSVM());
  const now = BigInt(Math.floor(Date.now() / 1000));
  svm.setClock(new Clock(0n, now, 0n, 1n, now));
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
  for (const program of options.programs ?? []) svm.addProgram(address(program.programId), program.elf);
  const clock = new SlotClock(svm, saved?.slots ?? []);
  const index = new SignatureIndex(saved?.transactions ?? []);
  // Transactions never run in the slot a chain starts at: a new chain's slot 0 is its genesis. A
  // restarted chain goes on from after the slot it saved, one slot more than the clock could have
  // made since (ticks run at most once per slotMs): no client sees the slot go back, even after a
  // kill -9 lost the last seconds.
  const missed = saved && slotMs > 0 ? Math.ceil(Math.max(0, Date.now() - (saved.savedAt ?? Date.now())) / slotMs) : 0;
  clock.advance(1 + missed);
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

  save();

  const server = createRpcServer(createRpcMethods({ svm, ledger, clock, index, genesisHash }), log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let holds = 0;
  const slotTimer = slotMs > 0 ? setInterval(() => holds === 0 && clock.tick(), slotMs) : undefined;
  const saveTimer = directory
    ? setInterval(() => {
        try {
          save();
        } catch (err) {
          log?.error({ err, dataDir: options.dataDir }, 'solana localnet: save failed');
        }
      }, saveIntervalMs)
    : undefined;
  log?.info({ port, slot: clock.slot, dataDir: options.dataDir, transactions: index.size }, 'solana localnet listening');

  let stopping: Promise<void> | undefined;
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    port,
    dataDir: options.dataDir,
    svm,
    faucet: faucet.address,
    slot: () => clock.slot,
    advanceSlots: (count) => clock.advance(count),
    hold: () => {
      holds++;
      let released = false;
      return () => {
        if (!released) holds--;
        released = true;
      };
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
