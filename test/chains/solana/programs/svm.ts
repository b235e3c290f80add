/**
 * A LiteSVM world for the HTLC programs: both programs deployed through the Upgradeable Loader, a fee
 * payer, and helpers that send real signed transactions and read the result.
 */
import assert from 'node:assert/strict';
import type { LiteSVM } from 'litesvm';
import { InstructionErrorCustom, TransactionErrorInstructionError } from 'litesvm/dist/internal.js';
import {
  addSignersToTransactionMessage,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type TransactionSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTokenDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { SOLANA_PROGRAMS } from '../../../../src/chains/solana/program-artifacts.ts';
import { deployUpgradeable } from '../../../../src/chains/solana/program-deploy.ts';
import { solanaRpc } from '../../../../src/chains/solana/rpc.ts';
import { startSolanaLocalnet } from '../../../../src/localnet/solana/chain/index.ts';
import { localnetProgramKeypair } from '../../../../src/localnet/solana/programs/deploy.ts';
import type { SolanaProgramName } from '../../../../src/localnet/solana/programs/build.ts';
import type { BuiltPrograms } from '../../../helpers/solana.ts';

export interface Outcome {
  ok: boolean;
  logs: string[];
  computeUnits: bigint;
  /** The custom program error (InstructionError::Custom), when the transaction failed with one. */
  customError?: number;
  error?: string;
}

export const SOL = 1_000_000_000n;
/** Fee per signature on LiteSVM's default fee structure. */
export const FEE_PER_SIGNATURE = 5000n;

export class World {
  readonly programs = {} as Record<SolanaProgramName, Address>;
  /** Compute units of each successful program instruction, by label. */
  readonly computeUnits = new Map<string, bigint>();

  private constructor(
    readonly svm: LiteSVM,
    readonly payer: KeyPairSigner,
  ) {}

  /**
   * The programs are deployed as `hashlock deploy` and `hashlock dev` deploy them: the shared loader
   * steps over a local chain's JSON-RPC. The chain's server stops then; the world drives its LiteSVM.
   */
  static async create(built: BuiltPrograms): Promise<World> {
    const chain = await startSolanaLocalnet({ slotMs: 0 });
    const world = new World(chain.svm, await generateKeyPairSigner());
    world.svm.airdrop(world.payer.address, lamports(1000n * SOL));
    try {
      const access = { rpc: solanaRpc(chain.rpcUrl), payer: world.payer, commitment: 'processed' as const };
      for (const name of SOLANA_PROGRAMS) {
        const program = await localnetProgramKeypair(name);
        await deployUpgradeable(access, { label: name, elf: built[name], program, buffer: await generateKeyPairSigner(), upgradeAuthority: world.payer.address });
        world.programs[name] = program.address;
      }
    } finally {
      await chain.stop();
    }
    // A deployed program becomes visible from the next slot.
    world.svm.warpToSlot(world.svm.getClock().slot + 1n);
    return world;
  }

  async funded(sol = 10n): Promise<KeyPairSigner> {
    const signer = await generateKeyPairSigner();
    this.svm.airdrop(signer.address, lamports(sol * SOL));
    return signer;
  }

  balance(address: Address): bigint {
    return this.svm.getBalance(address) ?? 0n;
  }

  exists(address: Address): boolean {
    return this.svm.getAccount(address).exists;
  }

  data(address: Address): Uint8Array {
    const account = this.svm.getAccount(address);
    assert.ok(account.exists, `account ${address} does not exist`);
    return Uint8Array.from(account.data);
  }

  /** The program that owns the account, undefined when it does not exist. */
  owner(address: Address): Address | undefined {
    const account = this.svm.getAccount(address);
    return account.exists ? account.programAddress : undefined;
  }

  rent(space: bigint): bigint {
    return this.svm.minimumBalanceForRentExemption(space);
  }

  slot(): bigint {
    return this.svm.getClock().slot;
  }

  /** Sends `instructions` in one fresh transaction paid by `feePayer` (the world's payer by default). */
  async send(instructions: Instruction[], signers: TransactionSigner[] = [], feePayer: TransactionSigner = this.payer): Promise<Outcome> {
    this.svm.expireBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: 0n }, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
      (m) => addSignersToTransactionMessage(signers, m),
    );
    const result = this.svm.sendTransaction(await signTransactionMessageWithSigners(message));
    if (!('err' in result)) return { ok: true, logs: result.logs(), computeUnits: result.computeUnitsConsumed() };
    const meta = result.meta();
    const err: unknown = result.err();
    let customError: number | undefined;
    if (err instanceof TransactionErrorInstructionError) {
      const inner: unknown = err.err();
      if (inner instanceof InstructionErrorCustom) customError = inner.code;
    }
    return { ok: false, logs: meta.logs(), computeUnits: meta.computeUnitsConsumed(), customError, error: result.toString() };
  }

  /** Sends and requires success; records the compute units the program instruction used under `label`. */
  async succeed(label: string, instructions: Instruction[], signers: TransactionSigner[] = [], feePayer?: TransactionSigner): Promise<Outcome> {
    const outcome = await this.send(instructions, signers, feePayer);
    assert.ok(outcome.ok, `${label} failed: ${outcome.error}\n${outcome.logs.join('\n')}`);
    const consumed = programComputeUnits(outcome.logs, Object.values(this.programs));
    if (consumed !== undefined) this.computeUnits.set(label, consumed);
    return outcome;
  }

  /** Sends and requires failure with the custom error `code`. */
  async refuse(label: string, instructions: Instruction[], code: number, signers: TransactionSigner[] = []): Promise<Outcome> {
    const outcome = await this.send(instructions, signers);
    assert.equal(outcome.ok, false, `${label} succeeded but must fail with ${code}`);
    assert.equal(outcome.customError, code, `${label}: expected custom error ${code}, got ${outcome.error}\n${outcome.logs.join('\n')}`);
    return outcome;
  }

  // ---- SPL Token ----

  async createMint(decimals = 6): Promise<{ mint: Address; authority: KeyPairSigner }> {
    const mint = await generateKeyPairSigner();
    const space = BigInt(getMintSize());
    await this.succeed('create mint', [
      getCreateAccountInstruction({ payer: this.payer, newAccount: mint, lamports: this.rent(space), space, programAddress: TOKEN_PROGRAM_ADDRESS }),
      getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: this.payer.address }),
    ]);
    return { mint: mint.address, authority: this.payer };
  }

  /** The owner's associated token account for `mint`, created, with `amount` minted to it. */
  async tokenAccount(owner: Address, mint: Address, amount = 0n): Promise<Address> {
    const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const instructions: Instruction[] = [getCreateAssociatedTokenIdempotentInstruction({ payer: this.payer, ata, owner, mint })];
    if (amount > 0n) instructions.push(getMintToInstruction({ mint, token: ata, mintAuthority: this.payer, amount }));
    await this.succeed('token account', instructions);
    return ata;
  }

  tokenBalance(account: Address): bigint {
    return getTokenDecoder().decode(this.data(account)).amount;
  }
}

/** "Program <id> consumed N of M compute units" of the first of `programs` in the logs. */
export function programComputeUnits(logs: readonly string[], programs: readonly Address[]): bigint | undefined {
  for (const line of logs) {
    const match = /^Program (\w+) consumed (\d+) of \d+ compute units$/.exec(line);
    if (match && programs.includes(match[1] as Address)) return BigInt(match[2] ?? '0');
  }
  return undefined;
}

export const addressBytes = (a: Address): Uint8Array => Uint8Array.from(getAddressEncoder().encode(a));
