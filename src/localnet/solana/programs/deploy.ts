/**
 * Deploys a program through the BPF Upgradeable Loader the way `solana program deploy` does:
 * a buffer account (CreateAccount + InitializeBuffer), the program bytes written in chunks (Write),
 * then the program account and DeployWithMaxDataLen, which re-checks the ELF and runs the verifier.
 * Every step is a real signed @solana/kit transaction handed to the caller's `send`, so the same code
 * deploys into LiteSVM in tests and over JSON-RPC to a local chain.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getTransactionEncoder,
  getProgramDerivedAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { concatBytes } from '../../../chains/solana/pda.ts';
import type { SolanaProgramName } from '../../../chains/solana/program-artifacts.ts';

export const BPF_LOADER_UPGRADEABLE_ADDRESS = address('BPFLoaderUpgradeab1e11111111111111111111111');
const SYSVAR_RENT_ADDRESS = address('SysvarRent111111111111111111111111111111111');
const SYSVAR_CLOCK_ADDRESS = address('SysvarC1ock11111111111111111111111111111111');

/** UpgradeableLoaderState sizes: Buffer { authority: Option<Pubkey> } and Program { programdata }. */
const BUFFER_METADATA_BYTES = 37;
const PROGRAM_ACCOUNT_BYTES = 36;
/** Program bytes per Write transaction: a Write transaction stays under the packet limit. */
export const DEFAULT_WRITE_CHUNK_BYTES = 900;
/** The largest wire transaction a validator accepts (IPv6 MTU minus headers). */
export const PACKET_DATA_BYTES = 1232;

/** How deploy transactions reach a chain, and what it needs to know from it. */
export interface DeployTransport {
  latestBlockhash(): Promise<{ blockhash: Blockhash; lastValidBlockHeight: bigint }>;
  minimumBalanceForRentExemption(space: bigint): Promise<bigint>;
  /** Executes a signed transaction; throws when the chain refuses it. */
  send(transaction: Transaction): Promise<void>;
}

export interface DeployedProgram {
  programId: Address;
  programData: Address;
  buffer: Address;
  transactions: number;
}

/** The program data account of an upgradeable program: PDA [program id] of the loader. */
export async function programDataAddress(programId: Address): Promise<Address> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    seeds: [getAddressEncoder().encode(programId)],
  });
  return pda;
}

function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, true);
  return out;
}

function u64(value: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value, true);
  return out;
}

const concat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

/** UpgradeableLoaderInstruction, bincode: u32 variant, then the fields (Vec<u8> with a u64 length). */
export const loaderInstructionData = {
  initializeBuffer: (): Uint8Array => u32(0),
  write: (offset: number, bytes: Uint8Array): Uint8Array => concat(u32(1), u32(offset), u64(BigInt(bytes.length)), bytes),
  deployWithMaxDataLen: (maxDataLen: bigint): Uint8Array => concat(u32(2), u64(maxDataLen)),
};

async function signed(transport: DeployTransport, payer: KeyPairSigner, instructions: Instruction[]): Promise<Transaction> {
  const lifetime = await transport.latestBlockhash();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return signTransactionMessageWithSigners(message);
}

/**
 * Deploys `bytes` as the upgradeable program whose address is `program`'s public key; `payer` pays
 * and becomes the upgrade authority. `maxDataLen` defaults to the program's size.
 */
export async function deployProgram(input: {
  program: KeyPairSigner;
  payer: KeyPairSigner;
  bytes: Uint8Array;
  transport: DeployTransport;
  maxDataLen?: bigint;
  chunkBytes?: number;
}): Promise<DeployedProgram> {
  const { program, payer, bytes, transport } = input;
  const chunkBytes = input.chunkBytes ?? DEFAULT_WRITE_CHUNK_BYTES;
  const buffer = await generateKeyPairSigner();
  const bufferSpace = BigInt(BUFFER_METADATA_BYTES + bytes.length);
  let transactions = 0;
  const send = async (instructions: Instruction[]): Promise<void> => {
    const transaction = await signed(transport, payer, instructions);
    // LiteSVM takes larger transactions than a validator does; refuse them here so tests catch it.
    const size = getTransactionEncoder().encode(transaction).length;
    if (size > PACKET_DATA_BYTES) throw new Error(`deploy transaction of ${size} bytes exceeds ${PACKET_DATA_BYTES}; use smaller chunks`);
    await transport.send(transaction);
    transactions++;
  };

  await send([
    getCreateAccountInstruction({
      payer,
      newAccount: buffer,
      lamports: await transport.minimumBalanceForRentExemption(bufferSpace),
      space: bufferSpace,
      programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    }),
    {
      programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
      accounts: [
        { address: buffer.address, role: AccountRole.WRITABLE },
        { address: payer.address, role: AccountRole.READONLY },
      ],
      data: loaderInstructionData.initializeBuffer(),
    },
  ]);

  for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
    await send([
      {
        programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
        accounts: [
          { address: buffer.address, role: AccountRole.WRITABLE },
          { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
        ] as Instruction['accounts'],
        data: loaderInstructionData.write(offset, bytes.subarray(offset, offset + chunkBytes)),
      },
    ]);
  }

  const programData = await programDataAddress(program.address);
  await send([
    getCreateAccountInstruction({
      payer,
      newAccount: program,
      lamports: await transport.minimumBalanceForRentExemption(BigInt(PROGRAM_ACCOUNT_BYTES)),
      space: BigInt(PROGRAM_ACCOUNT_BYTES),
      programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    }),
    {
      programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
      accounts: [
        { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
        { address: programData, role: AccountRole.WRITABLE },
        { address: program.address, role: AccountRole.WRITABLE },
        { address: buffer.address, role: AccountRole.WRITABLE },
        { address: SYSVAR_RENT_ADDRESS, role: AccountRole.READONLY },
        { address: SYSVAR_CLOCK_ADDRESS, role: AccountRole.READONLY },
        { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
        { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
      ] as Instruction['accounts'],
      data: loaderInstructionData.deployWithMaxDataLen(input.maxDataLen ?? BigInt(bytes.length)),
    },
  ]);
  return { programId: program.address, programData, buffer: buffer.address, transactions };
}

/**
 * Seeds of the local chain's program keypairs: the ed25519 private key of each program is
 * sha256(seed), so the localnet program ids never change. Test and local use only: anyone can derive
 * these keys.
 */
export const LOCALNET_PROGRAM_KEY_SEEDS: Readonly<Record<SolanaProgramName, string>> = {
  native_swaps: 'hashlock localnet program key v1: solana_native_swaps',
  spl_swaps: 'hashlock localnet program key v1: solana_spl_swaps',
};

/** The localnet program ids, sha256(seed) public keys (pinned by a test against the derivation). */
export const LOCALNET_PROGRAM_IDS: Readonly<Record<SolanaProgramName, Address>> = {
  native_swaps: address('2JFnwHGRYz32BR9KdM9eG3DUUH5pxdACtaMSb9wKMWET'),
  spl_swaps: address('HSvrBfUC75yag4tFuSsBMSGirA7wqkWR7tP2QYGAPdNp'),
};

/** A local keypair whose ed25519 private key is sha256(seed): anyone can derive it, so local use only. */
export function keypairOfSeed(seed: string): Promise<KeyPairSigner> {
  return createKeyPairSignerFromPrivateKeyBytes(sha256(new TextEncoder().encode(seed)));
}

export function localnetProgramKeypair(name: SolanaProgramName): Promise<KeyPairSigner> {
  return keypairOfSeed(LOCALNET_PROGRAM_KEY_SEEDS[name]);
}
