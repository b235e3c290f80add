import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  devnet,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { startSolanaLocalnet, type SolanaLocalnet, type SolanaLocalnetOptions } from '../../src/localnet/solana/chain/index.ts';
import { LOCALNET_PROGRAM_IDS } from '../../src/localnet/solana/programs/deploy.ts';
import { solanaProgramsForSuite } from './solana.ts';

/** A kit RPC client for the localnet; devnet() only types it with the test clusters' methods (requestAirdrop). */
export function localnetRpc(url: string) {
  return createSolanaRpc(devnet(url));
}

export type SolanaRpc = ReturnType<typeof localnetRpc>;

export interface LocalnetHarness {
  chain: SolanaLocalnet;
  rpc: SolanaRpc;
  dataDir: string;
  stop(): Promise<void>;
}

/** A localnet on a free port over a temporary data directory (removed at stop unless `keepDir`). */
export async function startTestLocalnet(options: Omit<SolanaLocalnetOptions, 'port'> & { keepDir?: boolean } = {}): Promise<LocalnetHarness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hashlock-solana-'));
  const chain = await startSolanaLocalnet({ ...options, dataDir, port: 0 });
  return {
    chain,
    rpc: localnetRpc(chain.rpcUrl),
    dataDir,
    stop: async () => {
      await chain.stop();
      if (!options.keepDir && options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new key funded by requestAirdrop (the airdrop is processed at once: the localnet runs it when asked). */
export async function fundedSigner(rpc: SolanaRpc, sol = 10n): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  await rpc.requestAirdrop(signer.address, lamports(sol * 1_000_000_000n)).send();
  return signer;
}

/** Signs a v0 transaction paid by `payer` over the chain's latest blockhash (or `blockhash`). */
export async function signedTransaction(rpc: SolanaRpc, payer: KeyPairSigner, instructions: readonly Instruction[], blockhash?: string) {
  const latest = blockhash === undefined ? (await rpc.getLatestBlockhash({ commitment: 'processed' }).send()).value : { blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n };
  const signed = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  return { wire: getBase64EncodedWireTransaction(signed), signature: getSignatureFromTransaction(signed), lastValidBlockHeight: latest.lastValidBlockHeight };
}

/** Sends a signed transaction (base64, with preflight unless told otherwise) and returns its signature. */
export async function sendWire(rpc: SolanaRpc, wire: ReturnType<typeof getBase64EncodedWireTransaction>, skipPreflight = false): Promise<Signature> {
  return rpc.sendTransaction(wire, { encoding: 'base64', skipPreflight }).send();
}

/** A raw JSON-RPC call, for answers kit would turn into exceptions or reshape. */
export async function rawRpc(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return res.json();
}

/**
 * A localnet with the native HTLC program deployed, on demand slots, and two accounts: `payer` with
 * 100 SOL (it funds swaps as the solver does) and `redeemer`.
 */
export async function startNativeSwapsLocalnet(): Promise<{ net: LocalnetHarness; payer: KeyPairSigner; redeemer: KeyPairSigner }> {
  const programs = await solanaProgramsForSuite();
  const net = await startTestLocalnet({ slotMs: 0, programs: [{ programId: LOCALNET_PROGRAM_IDS.native_swaps, elf: programs.native_swaps }] });
  const payer = await generateKeyPairSigner();
  const redeemer = await generateKeyPairSigner();
  await net.rpc.requestAirdrop(payer.address, lamports(100_000_000_000n)).send();
  net.chain.advanceSlots(1);
  return { net, payer, redeemer };
}
