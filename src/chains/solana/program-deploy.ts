/**
 * An upgradeable program deployed over standard Solana JSON-RPC, the way `solana program deploy`
 * does it: a buffer account (CreateAccount + InitializeBuffer), the ELF written into it in chunks
 * that each fit a transaction (Write, sent together), then the program account and
 * DeployWithMaxDataLen, which re-checks the ELF, runs the verifier and closes the buffer.
 *
 * Each step is chosen from what the chain holds, read again after every step has landed, so a run
 * that stopped anywhere (or whose transactions expired unseen) goes on where the chain is: a buffer
 * that exists is completed (only chunks that differ are written), a program that exists is done.
 * That is why the caller passes the buffer's keypair: derived, the same on every run.
 *
 * ProgramData is sized to the ELF, as the CLI's default is: an upgrade to a larger build first grows
 * it with ExtendProgram.
 */
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  isSolanaError,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type ReadonlyUint8Array,
  type Signature,
  type Transaction,
} from '@solana/kit';
import { getAllocateInstruction, getAssignInstruction, getCreateAccountInstruction, getTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { describeSolanaError, isAlreadyProcessed } from './chain-errors.ts';
import {
  BUFFER_HEADER_BYTES,
  decodeBuffer,
  decodeProgramAccount,
  decodeProgramData,
  deployWithMaxDataLenInstruction,
  initializeBufferInstruction,
  LOADER_V3_ADDRESS,
  PROGRAM_ACCOUNT_BYTES,
  PROGRAM_DATA_HEADER_BYTES,
  programDataAddress,
  setAuthorityInstruction,
  writeInstruction,
} from './loader-v3.ts';
import type { solanaRpc } from './rpc.ts';
import { LAMPORTS_PER_SIGNATURE } from './transactions.ts';

/** The largest wire transaction a validator takes (IPv6 MTU less headers). */
export const PACKET_DATA_BYTES = 1232;
/** How often unconfirmed transactions are sent again, as the CLI's deploy does. */
const RESEND_MS = 2_000;
/** Steps whose blockhash may expire before the chain has them, in one program's deployment. */
const MAX_EXPIRED_STEPS = 5;
const MAX_STATUSES_PER_CALL = 256;

export type SolanaRpcClient = ReturnType<typeof solanaRpc>;

export interface LoaderAccess {
  rpc: SolanaRpcClient;
  /** Pays for everything and is the buffer's authority (so the deployment's signer). */
  payer: KeyPairSigner;
  /**
   * When a step counts as landed and what reads and preflight look at: `confirmed` on a cluster; a
   * one-node local chain without forks may take `processed`.
   */
  commitment: 'processed' | 'confirmed';
  pollMs?: number;
  log?: (line: string) => void;
}

/** What the reads take: a node and a commitment, with or without the rest of an access (no signer needed). */
export type LoaderReads = Pick<LoaderAccess, 'rpc' | 'commitment'> & Partial<LoaderAccess>;

/** What a program id holds. */
export type ProgramOnChain =
  | { kind: 'absent'; lamports: bigint }
  | { kind: 'upgradeable'; programData: Address; authority: Address | null; code: ReadonlyUint8Array }
  | { kind: 'other'; description: string };

interface AccountRead {
  owner: Address;
  lamports: bigint;
  executable: boolean;
  data: Uint8Array;
}

async function readAccount(access: LoaderReads, at: Address): Promise<AccountRead | undefined> {
  const { value } = await access.rpc.getAccountInfo(at, { encoding: 'base64', commitment: access.commitment }).send();
  if (!value) return undefined;
  return { owner: value.owner, lamports: value.lamports, executable: value.executable, data: Uint8Array.from(Buffer.from(value.data[0], 'base64')) };
}

const isEmptySystemAccount = (account: AccountRead): boolean => account.owner === SYSTEM_PROGRAM_ADDRESS && account.data.length === 0;

/** The program at `programId`: none (an empty system account with lamports counts as none), an upgradeable program, or something else. */
export async function readProgram(access: LoaderReads, programId: Address): Promise<ProgramOnChain> {
  const account = await readAccount(access, programId);
  if (!account) return { kind: 'absent', lamports: 0n };
  if (isEmptySystemAccount(account)) return { kind: 'absent', lamports: account.lamports };
  if (account.owner !== LOADER_V3_ADDRESS) return { kind: 'other', description: `an account of ${account.owner}${account.executable ? ' (a program of another loader)' : ''}` };
  const program = decodeProgramAccount(account.data);
  if (!program) return { kind: 'other', description: 'a loader account that is not a program (a buffer, or one not initialized)' };
  const dataAccount = await readAccount(access, program.programData);
  const programData = dataAccount && dataAccount.owner === LOADER_V3_ADDRESS ? decodeProgramData(dataAccount.data) : undefined;
  if (!programData) return { kind: 'other', description: `a closed program (its ProgramData ${program.programData} is gone)` };
  return { kind: 'upgradeable', programData: program.programData, authority: programData.authority, code: programData.code };
}

/**
 * Whether ProgramData holds exactly `elf`: its bytes after the 45-byte header, the rest of the
 * account (room left for upgrades) zero.
 */
export function holdsElf(code: ReadonlyUint8Array, elf: ReadonlyUint8Array): boolean {
  if (code.length < elf.length) return false;
  if (!Buffer.from(code.subarray(0, elf.length)).equals(Buffer.from(elf))) return false;
  return code.subarray(elf.length).every((b) => b === 0);
}

/** The lamports a deployment of `elfBytes` needs at its peak: the buffer, the program and ProgramData accounts, and the fees. */
export async function deploymentCost(access: LoaderAccess, elfBytes: number): Promise<bigint> {
  const rent = (space: number) => access.rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
  const [buffer, program, programData] = await Promise.all([rent(BUFFER_HEADER_BYTES + elfBytes), rent(PROGRAM_ACCOUNT_BYTES), rent(PROGRAM_DATA_HEADER_BYTES + elfBytes)]);
  const transactions = BigInt(Math.ceil(elfBytes / 900) + 2);
  return buffer + program + programData + transactions * 2n * LAMPORTS_PER_SIGNATURE;
}

/**
 * Instructions that leave `account` (its keypair signs) with `space` bytes owned by the loader and
 * rent-exempt: CreateAccount, or, when someone already sent lamports to the address, the rest of the
 * rent, Allocate and Assign (CreateAccount refuses an address that holds lamports).
 */
function loaderAccount(payer: KeyPairSigner, account: KeyPairSigner, space: number, rent: bigint, holding: bigint): Instruction[] {
  if (holding === 0n) {
    return [getCreateAccountInstruction({ payer, newAccount: account, lamports: rent, space: BigInt(space), programAddress: LOADER_V3_ADDRESS })];
  }
  return [
    ...(holding < rent ? [getTransferSolInstruction({ source: payer, destination: account.address, amount: rent - holding })] : []),
    getAllocateInstruction({ newAccount: account, space: BigInt(space) }),
    getAssignInstruction({ account, programAddress: LOADER_V3_ADDRESS }),
  ];
}

/**
 * Deploys `elf` at `program`'s address (its keypair signs the program account's creation) with
 * `upgradeAuthority`: the payer deploys as authority and, in the same transaction, hands it to
 * `upgradeAuthority` when that is another key (SetAuthority, which the new authority need not sign).
 * Answers the signature of the transaction that deployed it.
 */
export async function deployUpgradeable(
  access: LoaderAccess,
  input: { label: string; elf: ReadonlyUint8Array; program: KeyPairSigner; buffer: KeyPairSigner; upgradeAuthority: Address },
): Promise<Signature> {
  const { label, elf, program, buffer } = input;
  const { payer } = access;
  const log = access.log ?? (() => {});
  const chunkBytes = await writeChunkBytes(access, buffer.address);
  const programData = await programDataAddress(program.address);
  let expired = 0;
  // A deploy whose blockhash expired before it was seen may still have landed: the next read tells.
  let deploySent: Signature | undefined;
  for (;;) {
    const onChain = await readProgram(access, program.address);
    if (onChain.kind === 'upgradeable') {
      if (deploySent && holdsElf(onChain.code, elf)) return deploySent;
      throw new Error(`${label}: ${program.address} became a program while this run deployed it (another deployer at work?)`);
    }
    if (onChain.kind === 'other') throw new Error(`${label}: ${program.address} holds ${onChain.description}; nothing deployed there`);

    const bufferAccount = await readAccount(access, buffer.address);
    let step: { what: string; batches: Instruction[][]; deploys?: true };
    if (!bufferAccount || isEmptySystemAccount(bufferAccount)) {
      const space = BUFFER_HEADER_BYTES + elf.length;
      const rent = await access.rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
      step = {
        what: `create the buffer ${buffer.address}`,
        batches: [[...loaderAccount(payer, buffer, space, rent, bufferAccount?.lamports ?? 0n), initializeBufferInstruction(buffer.address, payer.address)]],
      };
    } else {
      checkBuffer(label, buffer.address, bufferAccount, payer.address, elf.length);
      const written = bufferAccount.data.subarray(BUFFER_HEADER_BYTES);
      const writes: Instruction[][] = [];
      for (let offset = 0; offset < elf.length; offset += chunkBytes) {
        const chunk = elf.subarray(offset, offset + chunkBytes);
        if (!Buffer.from(written.subarray(offset, offset + chunk.length)).equals(Buffer.from(chunk))) {
          writes.push([writeInstruction(buffer.address, payer.address, offset, chunk)]);
        }
      }
      if (writes.length > 0) {
        step = { what: `write ${writes.length} chunk${writes.length === 1 ? '' : 's'} of the ${elf.length}-byte ELF into ${buffer.address}`, batches: writes };
      } else {
        const rent = await access.rpc.getMinimumBalanceForRentExemption(BigInt(PROGRAM_ACCOUNT_BYTES)).send();
        step = {
          what: `deploy at ${program.address} (DeployWithMaxDataLen)`,
          deploys: true,
          batches: [
            [
              ...loaderAccount(payer, program, PROGRAM_ACCOUNT_BYTES, rent, onChain.lamports),
              deployWithMaxDataLenInstruction({ payer: payer.address, programData, program: program.address, buffer: buffer.address, authority: payer.address, maxDataLen: BigInt(elf.length) }),
              ...(input.upgradeAuthority === payer.address ? [] : [setAuthorityInstruction(programData, payer.address, input.upgradeAuthority)]),
            ],
          ],
        };
      }
    }
    log(`${label}: ${step.what}`);
    const landed = await land(access, label, step.what, step.batches);
    if (step.deploys) deploySent = landed.signatures[0];
    if (landed.expired) {
      if (++expired > MAX_EXPIRED_STEPS) throw new Error(`${label}: ${MAX_EXPIRED_STEPS} steps expired before the chain took them (${step.what}); is the node dropping transactions?`);
      continue;
    }
    if (step.deploys) return landed.signatures[0]!;
  }
}

/** A buffer this run may write: the loader's, initialized with the payer as authority, sized for the ELF. */
function checkBuffer(label: string, at: Address, account: AccountRead, payer: Address, elfBytes: number): void {
  const state = account.owner === LOADER_V3_ADDRESS ? decodeBuffer(account.data) : undefined;
  if (!state) throw new Error(`${label}: the buffer address ${at} holds an account of ${account.owner} that is not a loader buffer`);
  if (state.authority !== payer) throw new Error(`${label}: the buffer ${at} has authority ${state.authority ?? 'none'}, not the deployer ${payer}`);
  if (account.data.length !== BUFFER_HEADER_BYTES + elfBytes) throw new Error(`${label}: the buffer ${at} holds ${account.data.length - BUFFER_HEADER_BYTES} bytes, the program is ${elfBytes}`);
}

/** Hands ProgramData's upgrade authority from the payer to `upgradeAuthority`; read again after a transaction expired unseen. */
export async function setUpgradeAuthority(access: LoaderAccess, label: string, programData: Address, upgradeAuthority: Address): Promise<void> {
  const what = `the upgrade authority of ${programData} to ${upgradeAuthority}`;
  for (let attempt = 0; ; attempt++) {
    const account = await readAccount(access, programData);
    const state = account?.owner === LOADER_V3_ADDRESS ? decodeProgramData(account.data) : undefined;
    if (state?.authority === upgradeAuthority) return;
    if (state?.authority !== access.payer.address) throw new Error(`${label}: ${programData}'s upgrade authority is ${state?.authority ?? 'none'}, not the deployer's ${access.payer.address}: cannot set ${what}`);
    if (attempt > MAX_EXPIRED_STEPS) throw new Error(`${label}: ${MAX_EXPIRED_STEPS} transactions setting ${what} expired unseen`);
    access.log?.(`${label}: ${what}`);
    await land(access, label, what, [[setAuthorityInstruction(programData, access.payer.address, upgradeAuthority)]]);
  }
}

/**
 * The reason a refused step's simulation logged apart from the runtime's `Program …` lines: the loader's
 * ELF check says there what it refused (`Unresolved symbol (…) at instruction #…`), while its `failed`
 * line only says `invalid account data for instruction`.
 */
function loaderReason(err: unknown): string {
  if (!isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) return '';
  const lines = (err.context.logs ?? []).filter((line) => !line.startsWith('Program ')).slice(-3);
  return lines.length > 0 ? `: ${lines.join('; ').slice(0, 300)}` : '';
}

/** Program bytes per Write: what is left of a transaction's 1,232 bytes once the Write's own bytes are in. */
async function writeChunkBytes(access: LoaderAccess, buffer: Address): Promise<number> {
  const probe = 200; // past 127 bytes, so the data length prefix already has its 2 bytes
  const { value: lifetime } = await access.rpc.getLatestBlockhash({ commitment: access.commitment }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(access.payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions([writeInstruction(buffer, access.payer.address, 0, new Uint8Array(probe))], m),
  );
  const size = getTransactionEncoder().encode(compileTransaction(message)).length;
  return PACKET_DATA_BYTES - (size - probe);
}

/**
 * Signs each batch as one transaction over one recent blockhash, sends them all and waits until
 * each has landed at the access's commitment, sending again those not seen every 2 s. Answers their
 * signatures, and `expired` once the blockhash has expired with some unseen (the caller reads the
 * chain again). A transaction the chain ran and failed throws.
 */
async function land(access: LoaderAccess, label: string, what: string, batches: Instruction[][]): Promise<{ signatures: Signature[]; expired: boolean }> {
  const { rpc, commitment } = access;
  const pollMs = access.pollMs ?? 200;
  const { value: lifetime } = await rpc.getLatestBlockhash({ commitment }).send();
  const transactions: Transaction[] = [];
  for (const instructions of batches) {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(access.payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const transaction = await signTransactionMessageWithSigners(message);
    const size = getTransactionEncoder().encode(transaction).length;
    if (size > PACKET_DATA_BYTES) throw new Error(`${label}: a transaction of ${what} is ${size} bytes, over the ${PACKET_DATA_BYTES} a validator takes`);
    transactions.push(transaction);
  }
  const signatures = transactions.map(getSignatureFromTransaction);
  const send = async (transaction: Transaction, skipPreflight: boolean): Promise<void> => {
    try {
      await rpc.sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64', preflightCommitment: commitment, skipPreflight }).send();
    } catch (err) {
      if (isAlreadyProcessed(err)) return;
      throw new Error(`${label}: sending ${what} failed: ${describeSolanaError(err)}${loaderReason(err)}`, { cause: err });
    }
  };
  // Preflight the first sending, so a refusal comes back with the program's logs.
  await Promise.all(transactions.map((t) => send(t, false)));

  const pending = new Map(signatures.map((signature, i) => [signature, transactions[i]!]));
  let sentAt = Date.now();
  for (;;) {
    const waiting = [...pending.keys()];
    for (let i = 0; i < waiting.length; i += MAX_STATUSES_PER_CALL) {
      const batch = waiting.slice(i, i + MAX_STATUSES_PER_CALL);
      const { value } = await rpc.getSignatureStatuses(batch).send();
      batch.forEach((signature, j) => {
        const status = value[j];
        if (!status) return;
        if (status.err) throw new Error(`${label}: ${what} failed in ${signature}: ${describeSolanaError(status.err)}`);
        if (commitment === 'processed' || status.confirmationStatus !== 'processed') pending.delete(signature);
      });
    }
    if (pending.size === 0) return { signatures, expired: false };
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    if (Date.now() - sentAt < RESEND_MS) continue;
    const height = await rpc.getBlockHeight({ commitment }).send();
    if (height > lifetime.lastValidBlockHeight) return { signatures, expired: true };
    await Promise.all([...pending.values()].map((t) => send(t, true)));
    sentAt = Date.now();
  }
}
