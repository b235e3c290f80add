import type { LiteSVM } from 'litesvm';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase58Decoder,
  getAddressEncoder,
  getBase64Decoder,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Blockhash,
  type EncodedAccount,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { messageFee } from './fees.ts';
import { chargedFee, innerInstructionsJson, isFailure, metaOf, returnDataJson, type ExecutionResult } from './execution-metadata.ts';
import { decodeTransaction, signaturesVerify } from './transaction-checks.ts';
import { RpcError, INVALID_PARAMS, SEND_TRANSACTION_PREFLIGHT_FAILURE, TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, INTERNAL_ERROR } from './rpc-error.ts';
import type { InnerInstructionsJson, SignatureIndex, TransactionRecord } from './signature-index.ts';
import type { SlotClock } from './slot-clock.ts';
import { tokenBalances } from './token-accounts.ts';
import { transactionErrorJson, transactionErrorText, type TransactionErrorJson } from './transaction-errors.ts';
import { parseWireTransaction, type ParsedMessage, type ParsedTransaction } from './wire-transaction.ts';

const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
const LOOKUP_TABLE_META_SIZE = 56;
const COMPUTE_BUDGET_PROGRAM = address('ComputeBudget111111111111111111111111111111');
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** The System program's AdvanceNonceAccount instruction index. */
const ADVANCE_NONCE_ACCOUNT = 4;
/** A nonce account: version u32, state u32 (1 = initialized), authority, durable nonce, fee calculator. */
const NONCE_ACCOUNT_SIZE = 80;
const NONCE_STATE_OFFSET = 4;
const NONCE_STATE_INITIALIZED = 1;
const DURABLE_NONCE_OFFSET = 40;

const base58 = getBase58Decoder();
const base64 = getBase64Decoder();
const transactionDecoder = getTransactionDecoder();
const transactionEncoder = getTransactionEncoder();
const addressEncoder = getAddressEncoder();

export interface SimulationValue {
  err: TransactionErrorJson | null;
  logs: string[];
  accounts: (EncodedAccount | null)[] | null;
  unitsConsumed: bigint;
  returnData: TransactionRecord['returnData'];
  innerInstructions: InnerInstructionsJson[] | null;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
}

export interface ResolvedKeys {
  accountKeys: string[];
  loaded: { writable: string[]; readonly: string[] };
}

/**
 * Runs transactions on LiteSVM the way a validator would and records those that land. LiteSVM's
 * own blockhash check accepts only its latest blockhash, so it is off and this checks the last 150
 * slots' blockhashes instead; signature verification stays on in LiteSVM (and is checked here
 * first, to answer in the validator's order: signatures, then blockhash, then duplicates).
 */
export class Ledger {
  constructor(
    readonly svm: LiteSVM,
    readonly clock: SlotClock,
    readonly index: SignatureIndex,
    private readonly faucet: KeyPairSigner,
  ) {}

  /** Static keys plus those loaded from address lookup tables; throws -32602 as the RPC's sanitize does. */
  resolveKeys(message: ParsedMessage): ResolvedKeys {
    const loaded = { writable: [] as string[], readonly: [] as string[] };
    for (const lookup of message.addressTableLookups) {
      const table = this.svm.getAccount(address(lookup.accountKey));
      const fail = (name: string) => new RpcError(INVALID_PARAMS, `invalid transaction: ${transactionErrorText(name)}`);
      if (!table.exists) throw fail('AddressLookupTableNotFound');
      if (table.programAddress !== ADDRESS_LOOKUP_TABLE_PROGRAM) throw fail('InvalidAddressLookupTableOwner');
      const data = table.data;
      if (data.length < LOOKUP_TABLE_META_SIZE || (data.length - LOOKUP_TABLE_META_SIZE) % 32 !== 0) throw fail('InvalidAddressLookupTableData');
      const count = (data.length - LOOKUP_TABLE_META_SIZE) / 32;
      const at = (i: number) => {
        if (i >= count) throw fail('InvalidAddressLookupTableIndex');
        return base58.decode(data.subarray(LOOKUP_TABLE_META_SIZE + 32 * i, LOOKUP_TABLE_META_SIZE + 32 * (i + 1)));
      };
      loaded.writable.push(...lookup.writableIndexes.map(at));
      loaded.readonly.push(...lookup.readonlyIndexes.map(at));
    }
    return { accountKeys: [...message.staticAccountKeys, ...loaded.writable, ...loaded.readonly], loaded };
  }

  /** The error a validator gives a transaction before running it: an unknown or expired blockhash, or a repeat. */
  private ageError(tx: ParsedTransaction): TransactionErrorJson | null {
    if (!this.clock.isBlockhashValid(tx.message.recentBlockhash) && !this.usesStoredNonce(tx)) return 'BlockhashNotFound';
    if (this.index.has(base58.decode(tx.signatures[0]!))) return 'AlreadyProcessed';
    return null;
  }

  /**
   * Whether `tx` is a durable-nonce transaction whose "blockhash" is the nonce its nonce account
   * holds now: its first instruction is the System program's AdvanceNonceAccount, whose first
   * account (a static key) is an initialized nonce account. The runtime then advances the nonce.
   */
  private usesStoredNonce(tx: ParsedTransaction): boolean {
    const { instructions, staticAccountKeys, recentBlockhash } = tx.message;
    const first = instructions[0];
    if (!first || staticAccountKeys[first.programIdIndex] !== SYSTEM_PROGRAM) return false;
    if (first.data.length < 4 || new DataView(first.data.buffer, first.data.byteOffset, 4).getUint32(0, true) !== ADVANCE_NONCE_ACCOUNT) return false;
    const nonceKey = staticAccountKeys[first.accounts[0] ?? staticAccountKeys.length];
    if (nonceKey === undefined) return false;
    const account = this.svm.getAccount(address(nonceKey));
    if (!account.exists || account.programAddress !== SYSTEM_PROGRAM || account.data.length !== NONCE_ACCOUNT_SIZE) return false;
    const view = new DataView(account.data.buffer, account.data.byteOffset, account.data.byteLength);
    if (view.getUint32(NONCE_STATE_OFFSET, true) !== NONCE_STATE_INITIALIZED) return false;
    return base58.decode(account.data.subarray(DURABLE_NONCE_OFFSET, DURABLE_NONCE_OFFSET + 32)) === recentBlockhash;
  }

  /**
   * sendTransaction: with preflight, a transaction that would fail is refused with -32002 (the
   * simulation's error and logs) and does not land; without, it is run and lands if it pays its
   * fee, and one a validator would drop (bad signature, unknown blockhash, a repeat) is dropped
   * silently. Either way the answer is the signature.
   */
  send(wire: Uint8Array, options: { skipPreflight: boolean }): string {
    const tx = decodeTransaction(wire);
    const keys = this.resolveKeys(tx.message);
    const signature = base58.decode(tx.signatures[0]!);
    const verified = signaturesVerify(tx);
    if (!options.skipPreflight) {
      if (!verified) throw new RpcError(TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, 'Transaction signature verification failure');
      const simulation = this.simulateParsed(tx, { sigVerify: true, replaceRecentBlockhash: false, accounts: undefined, innerInstructions: false });
      if (simulation.err !== null) {
        throw new RpcError(SEND_TRANSACTION_PREFLIGHT_FAILURE, `Transaction simulation failed: ${transactionErrorText(simulation.err)}`, simulation);
      }
    }
    if (!verified || this.ageError(tx) !== null) return signature;
    this.execute(tx, keys);
    return signature;
  }

  /** simulateTransaction's value. */
  simulate(wire: Uint8Array, options: { sigVerify: boolean; replaceRecentBlockhash: boolean; accounts: string[] | undefined; innerInstructions: boolean }): SimulationValue {
    const tx = decodeTransaction(wire);
    this.resolveKeys(tx.message);
    if (options.sigVerify && !signaturesVerify(tx)) throw new RpcError(TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, 'Transaction signature verification failure');
    return this.simulateParsed(tx, options);
  }

  private simulateParsed(
    original: ParsedTransaction,
    options: { sigVerify: boolean; replaceRecentBlockhash: boolean; accounts: string[] | undefined; innerInstructions: boolean },
  ): SimulationValue {
    let tx = original;
    let replacementBlockhash: SimulationValue['replacementBlockhash'] = null;
    if (options.replaceRecentBlockhash) {
      const current = this.clock.current;
      const wire = tx.wire.slice();
      const messageStart = wire.length - tx.message.bytes.length;
      wire.set(addressEncoder.encode(address(current.blockhash)), messageStart + tx.message.blockhashOffset);
      tx = parseWireTransaction(wire);
      replacementBlockhash = { blockhash: current.blockhash, lastValidBlockHeight: this.clock.lastValidBlockHeight(current.slot) };
    }
    const empty = { logs: [], accounts: null, unitsConsumed: 0n, returnData: null, innerInstructions: null, replacementBlockhash };
    const ageError = this.ageError(tx);
    if (ageError !== null) return { err: ageError, ...empty };
    const kitTx = transactionDecoder.decode(tx.wire);
    this.svm.withSigverify(options.sigVerify);
    let result;
    try {
      result = this.svm.simulateTransaction(kitTx);
    } catch {
      return { err: 'SignatureFailure', ...empty };
    } finally {
      this.svm.withSigverify(true);
    }
    const failure = isFailure(result) ? result : undefined;
    const meta = result.meta();
    let accounts: SimulationValue['accounts'] = null;
    if (options.accounts) {
      const post = isFailure(result) ? [] : result.postAccounts();
      accounts = options.accounts.map((key) => {
        const changed = post.find((a) => a.address === key);
        if (changed) return changed.lamports === 0n && changed.data.length === 0 ? null : changed;
        const current = this.svm.getAccount(address(key));
        return current.exists ? current : null;
      });
    }
    return {
      err: failure ? transactionErrorJson(failure.err()) : null,
      logs: meta.logs(),
      accounts,
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData: returnDataJson(meta),
      innerInstructions: options.innerInstructions ? innerInstructionsJson(meta) : null,
      replacementBlockhash,
    };
  }

  /** Runs a checked transaction and records it when it lands (succeeds, or fails having paid its fee). */
  private execute(tx: ParsedTransaction, keys: ResolvedKeys): ExecutionResult {
    const svm = this.svm;
    const balances = () => keys.accountKeys.map((key) => svm.getBalance(address(key)) ?? 0n);
    const programs = new Set(tx.message.instructions.map((ix) => ix.programIdIndex));
    const preBalances = balances();
    const preTokenBalances = tokenBalances(svm, keys.accountKeys, programs);
    let result: ExecutionResult;
    try {
      result = svm.sendTransaction(transactionDecoder.decode(tx.wire));
    } catch (err) {
      throw new RpcError(INTERNAL_ERROR, `the runtime refused the transaction: ${(err as Error).message}`);
    }
    const postBalances = balances();
    const landed = !isFailure(result) || postBalances[0]! < preBalances[0]!;
    if (!landed) return result;
    const meta = metaOf(result);
    const current = this.clock.current;
    this.index.add({
      signature: base58.decode(tx.signatures[0]!),
      slot: current.slot,
      blockTime: current.unixTimestamp,
      wire: base64.decode(tx.wire),
      version: tx.message.version,
      accountKeys: keys.accountKeys,
      loadedAddresses: keys.loaded,
      err: isFailure(result) ? transactionErrorJson(result.err()) : null,
      fee: chargedFee(result, tx.message),
      preBalances,
      postBalances,
      preTokenBalances,
      postTokenBalances: tokenBalances(svm, keys.accountKeys, programs),
      logMessages: meta.logs(),
      innerInstructions: innerInstructionsJson(meta),
      returnData: returnDataJson(meta),
      computeUnitsConsumed: meta.computeUnitsConsumed(),
    });
    return result;
  }

  /**
   * requestAirdrop: a System transfer from the chain's faucet account, signed and run like any
   * transaction, so it shows in the recipient's signatures. Two equal airdrops in one slot would be
   * the same transaction; the second gets a distinct compute unit limit so both land.
   */
  async airdrop(to: string, lamports: bigint): Promise<string> {
    for (let variant = 0; variant < 1000; variant++) {
      const instructions: Instruction[] = [getTransferSolInstruction({ source: this.faucet, destination: address(to), amount: lamports })];
      if (variant > 0) {
        const data = new Uint8Array(5);
        data[0] = 2;
        new DataView(data.buffer).setUint32(1, 200_000 + variant, true);
        instructions.unshift({ programAddress: COMPUTE_BUDGET_PROGRAM, data });
      }
      const current = this.clock.current;
      const signed = await signTransactionMessageWithSigners(
        pipe(
          createTransactionMessage({ version: 'legacy' }),
          (m) => setTransactionMessageFeePayerSigner(this.faucet, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: current.blockhash as Blockhash, lastValidBlockHeight: BigInt(this.clock.lastValidBlockHeight(current.slot)) }, m),
          (m) => appendTransactionMessageInstructions(instructions, m),
        ),
      );
      const tx = parseWireTransaction(new Uint8Array(transactionEncoder.encode(signed)));
      const signature = base58.decode(tx.signatures[0]!);
      if (this.ageError(tx) !== null) continue;
      const result = this.execute(tx, this.resolveKeys(tx.message));
      if (isFailure(result)) throw new RpcError(INTERNAL_ERROR, `airdrop request failed: ${transactionErrorText(transactionErrorJson(result.err()))}`);
      return signature;
    }
    throw new RpcError(INTERNAL_ERROR, 'airdrop request failed: too many identical airdrops in one slot');
  }

  /** getFeeForMessage's value: null when the message's blockhash is not valid now. */
  feeForMessage(message: ParsedMessage): bigint | null {
    return this.clock.isBlockhashValid(message.recentBlockhash) ? messageFee(message) : null;
  }
}
