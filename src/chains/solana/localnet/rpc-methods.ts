import { address, getBase58Decoder, type EncodedAccount } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { accountEncoding, dataSlice, encodeAccount } from './account-encoding.ts';
import { epochPosition } from './epoch-schedule.ts';
import { decodeTransaction, type Ledger } from './ledger.ts';
import { BLOCK_NOT_AVAILABLE, invalidParams, RpcError, UNSUPPORTED_TRANSACTION_VERSION } from './rpc-error.ts';
import { decodeBase58, decodeBase64, encodedBytes, Params, signatureString, type Config } from './rpc-params.ts';
import type { SignatureIndex, TransactionRecord } from './signature-index.ts';
import type { Commitment, SlotClock } from './slot-clock.ts';
import { readMintDecimals, readTokenAccount, uiTokenAmount } from './token-accounts.ts';
import { parseWireMessage, WireFormatError, type ParsedMessage } from './wire-transaction.ts';

/** The Agave crates LiteSVM 1.5.0 is built from: the runtime that answers here. */
export const RUNTIME_VERSION = '4.3.0';
/** getVersion's feature-set: a fixed number here (LiteSVM enables every feature). */
const FEATURE_SET = 0;
/** The validator's status cache: without searchTransactionHistory, statuses older than this many slots are not found. */
const STATUS_CACHE_SLOTS = 300;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURES_FOR_ADDRESS = 1000;
const MAX_FILTERS = 4;
const MAX_MEMCMP_BYTES = 128;

const base58 = getBase58Decoder();

export type RpcMethod = (params: Params) => unknown;

export interface RpcMethodContext {
  svm: LiteSVM;
  ledger: Ledger;
  clock: SlotClock;
  index: SignatureIndex;
  genesisHash: string;
}

function confirmationStatus(clock: SlotClock, slot: number): Commitment {
  if (slot <= clock.slotAt('finalized')) return 'finalized';
  if (slot <= clock.slotAt('confirmed')) return 'confirmed';
  return 'processed';
}

function messageJson(message: ParsedMessage): Record<string, unknown> {
  return {
    accountKeys: message.staticAccountKeys,
    header: message.header,
    recentBlockhash: message.recentBlockhash,
    instructions: message.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: base58.decode(ix.data), stackHeight: null })),
    ...(message.version === 0 ? { addressTableLookups: message.addressTableLookups } : {}),
  };
}

function transactionMeta(record: TransactionRecord): Record<string, unknown> {
  return {
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    fee: record.fee,
    preBalances: record.preBalances,
    postBalances: record.postBalances,
    innerInstructions: record.innerInstructions,
    logMessages: record.logMessages,
    preTokenBalances: record.preTokenBalances,
    postTokenBalances: record.postTokenBalances,
    rewards: [],
    loadedAddresses: record.loadedAddresses,
    ...(record.returnData ? { returnData: record.returnData } : {}),
    computeUnitsConsumed: record.computeUnitsConsumed,
  };
}

function memcmpMatches(data: ArrayLike<number>, offset: number, bytes: Uint8Array): boolean {
  if (offset + bytes.length > data.length) return false;
  for (let i = 0; i < bytes.length; i++) if (data[offset + i] !== bytes[i]) return false;
  return true;
}

type AccountFilter = (account: EncodedAccount) => boolean;

function programAccountFilters(value: unknown): AccountFilter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParams('Invalid params: filters must be an array');
  if (value.length > MAX_FILTERS) throw invalidParams(`Too many filters provided; max ${MAX_FILTERS}`);
  return value.map((filter: unknown): AccountFilter => {
    if (filter !== null && typeof filter === 'object' && 'dataSize' in filter) {
      const size = Number(filter.dataSize);
      if (!Number.isSafeInteger(size) || size < 0) throw invalidParams('Invalid params: dataSize must be a non-negative integer');
      return (account) => account.data.length === size;
    }
    if (filter !== null && typeof filter === 'object' && 'memcmp' in filter && filter.memcmp !== null && typeof filter.memcmp === 'object') {
      const memcmp = filter.memcmp as { offset?: unknown; bytes?: unknown; encoding?: unknown };
      const offset = Number(memcmp.offset);
      if (!Number.isSafeInteger(offset) || offset < 0) throw invalidParams('Invalid params: memcmp.offset must be a non-negative integer');
      if (typeof memcmp.bytes !== 'string') throw invalidParams('Invalid params: memcmp.bytes must be a string');
      const encoding = memcmp.encoding ?? 'base58';
      const bytes = encoding === 'base58' ? decodeBase58(memcmp.bytes) : encoding === 'base64' ? decodeBase64(memcmp.bytes) : undefined;
      if (!bytes) throw invalidParams(`Invalid params: memcmp.bytes is not valid ${JSON.stringify(encoding)}`);
      if (bytes.length > MAX_MEMCMP_BYTES) throw invalidParams('Encoded binary (base 58) data should be less than 128 bytes');
      return (account) => memcmpMatches(account.data, offset, bytes);
    }
    throw invalidParams(`Invalid params: unsupported filter ${JSON.stringify(filter)}`);
  });
}

/** The JSON-RPC methods, by name. Each reads its params and answers as the real RPC does, or throws RpcError. */
export function createRpcMethods(ctx: RpcMethodContext): Record<string, RpcMethod> {
  const { ledger, clock, index } = ctx;
  const withContext = (value: unknown, slot: number = clock.slot) => ({ context: { apiVersion: RUNTIME_VERSION, slot }, value });
  /** Account state is the latest state at every commitment (see index.ts); context.slot says so. */
  const accountRead = (config: Config) => {
    config.commitment();
    config.checkMinContextSlot(clock.slot);
  };
  const readAccount = (key: string): EncodedAccount | null => {
    const account = ctx.svm.getAccount(address(key));
    return account.exists ? account : null;
  };

  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': RUNTIME_VERSION, 'feature-set': FEATURE_SET }),
    getGenesisHash: () => ctx.genesisHash,
    getIdentity: () => ({ identity: '11111111111111111111111111111111' }),
    getFirstAvailableBlock: () => 0,
    getRecentPrioritizationFees: () => [],

    getSlot: (params) => {
      const config = params.config(0);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      return slot;
    },
    getBlockHeight: (params) => {
      const config = params.config(0);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      return slot;
    },
    getTransactionCount: (params) => {
      params.config(0).commitment();
      return index.size;
    },
    getEpochInfo: (params) => {
      const slot = clock.slotAt(params.config(0).commitment());
      const position = epochPosition(clock.schedule, slot);
      return { absoluteSlot: slot, blockHeight: slot, epoch: position.epoch, slotIndex: position.slotIndex, slotsInEpoch: position.slotsInEpoch, transactionCount: index.size };
    },
    getEpochSchedule: () => ({
      slotsPerEpoch: clock.schedule.slotsPerEpoch,
      leaderScheduleSlotOffset: clock.schedule.leaderScheduleSlotOffset,
      warmup: clock.schedule.warmup,
      firstNormalEpoch: clock.schedule.firstNormalEpoch,
      firstNormalSlot: clock.schedule.firstNormalSlot,
    }),

    getLatestBlockhash: (params) => {
      const config = params.config(0);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      const record = clock.recentSlot(slot);
      return withContext({ blockhash: record.blockhash, lastValidBlockHeight: clock.lastValidBlockHeight(record.slot) }, slot);
    },
    isBlockhashValid: (params) => {
      const blockhash = params.string(0, 'blockhash');
      const config = params.config(1);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      return withContext(clock.isBlockhashValid(blockhash), slot);
    },
    getFeeForMessage: (params) => {
      const bytes = encodedBytes(params.string(0, 'message'), 'base64', 'message');
      const config = params.config(1);
      const slot = clock.slotAt(config.commitment());
      config.checkMinContextSlot(slot);
      let message: ParsedMessage;
      try {
        message = parseWireMessage(bytes);
      } catch (err) {
        if (err instanceof WireFormatError) throw invalidParams(`invalid message: ${err.message}`);
        throw err;
      }
      return withContext(ledger.feeForMessage(message), slot);
    },
    getMinimumBalanceForRentExemption: (params) => {
      const size = params.u64(0, 'data length');
      params.config(1).commitment();
      return ctx.svm.minimumBalanceForRentExemption(size);
    },

    getBalance: (params) => {
      const key = params.address(0);
      accountRead(params.config(1));
      return withContext(ctx.svm.getBalance(address(key)) ?? 0n);
    },
    getAccountInfo: (params) => {
      const key = params.address(0);
      const config = params.config(1);
      accountRead(config);
      const encoding = accountEncoding(config.get('encoding'), 'binary');
      const slice = dataSlice(config.get('dataSlice'));
      const account = readAccount(key);
      return withContext(account && encodeAccount(account, encoding, slice));
    },
    getMultipleAccounts: (params) => {
      const keys = params.array(0, 'pubkeys');
      if (keys.length > MAX_MULTIPLE_ACCOUNTS) throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
      const config = params.config(1);
      accountRead(config);
      const encoding = accountEncoding(config.get('encoding'), 'base64');
      const slice = dataSlice(config.get('dataSlice'));
      const checked = keys.map((k, i) => new Params(keys).address(i, `pubkey ${String(k)}`));
      return withContext(checked.map((key) => {
        const account = readAccount(key);
        return account && encodeAccount(account, encoding, slice);
      }));
    },
    getProgramAccounts: (params) => {
      const program = params.address(0, 'program id');
      const config = params.config(1);
      accountRead(config);
      const encoding = accountEncoding(config.get('encoding'), 'binary');
      const slice = dataSlice(config.get('dataSlice'));
      const filters = programAccountFilters(config.get('filters'));
      const accounts = ctx.svm
        .getProgramAccounts(address(program))
        .filter((account) => filters.every((matches) => matches(account)))
        .map((account) => ({ pubkey: account.address, account: encodeAccount(account, encoding, slice) }));
      return config.boolean('withContext', false) ? withContext(accounts) : accounts;
    },
    getTokenAccountBalance: (params) => {
      const key = params.address(0);
      accountRead(params.config(1));
      if (!readAccount(key)) throw invalidParams('Invalid param: could not find account');
      const token = readTokenAccount(ctx.svm, key);
      if (!token) throw invalidParams('Invalid param: not a Token account');
      const decimals = readMintDecimals(ctx.svm, token.mint);
      if (decimals === undefined) throw invalidParams('Invalid param: could not find mint');
      return withContext(uiTokenAmount(token.amount, decimals));
    },

    sendTransaction: (params) => {
      const encoded = params.string(0, 'transaction');
      const config = params.config(1);
      config.commitment('finalized', 'preflightCommitment');
      config.checkMinContextSlot(clock.slot);
      const wire = encodedBytes(encoded, config.get('encoding'), 'transaction');
      return ledger.send(wire, { skipPreflight: config.boolean('skipPreflight', false) });
    },
    simulateTransaction: (params) => {
      const encoded = params.string(0, 'transaction');
      const config = params.config(1);
      config.commitment();
      config.checkMinContextSlot(clock.slot);
      const wire = encodedBytes(encoded, config.get('encoding'), 'transaction');
      const sigVerify = config.boolean('sigVerify', false);
      const replaceRecentBlockhash = config.boolean('replaceRecentBlockhash', false);
      if (sigVerify && replaceRecentBlockhash) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
      const accountsConfig = config.get('accounts') as { addresses?: unknown; encoding?: unknown } | undefined;
      let addresses: string[] | undefined;
      let encoding = accountEncoding(undefined, 'base64');
      if (accountsConfig !== undefined && accountsConfig !== null) {
        if (!Array.isArray(accountsConfig.addresses)) throw invalidParams('Invalid params: accounts.addresses must be an array');
        addresses = accountsConfig.addresses.map((_, i) => new Params(accountsConfig.addresses as unknown[]).address(i, 'account address'));
        encoding = accountEncoding(accountsConfig.encoding, 'base64');
        if (encoding === 'base58' || encoding === 'binary') throw invalidParams('base58 encoding not supported');
      }
      const value = ledger.simulate(wire, { sigVerify, replaceRecentBlockhash, accounts: addresses, innerInstructions: config.boolean('innerInstructions', false) });
      return withContext({ ...value, accounts: value.accounts && value.accounts.map((a) => a && encodeAccount(a, encoding)) });
    },
    requestAirdrop: async (params) => {
      const key = params.address(0);
      const lamports = params.u64(1, 'lamports');
      params.config(2).commitment();
      return ledger.airdrop(key, lamports);
    },

    getSignatureStatuses: (params) => {
      const signatures = params.array(0, 'signatures');
      if (signatures.length > MAX_SIGNATURE_STATUSES) throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
      const searchHistory = params.config(1).boolean('searchTransactionHistory', false);
      const checked = signatures.map((s) => signatureString(s, 'signature'));
      return withContext(checked.map((signature) => {
        const record = index.get(signature);
        if (!record) return null;
        if (!searchHistory && record.slot < clock.slot - STATUS_CACHE_SLOTS) return null;
        const status = confirmationStatus(clock, record.slot);
        return {
          slot: record.slot,
          confirmations: status === 'finalized' ? null : clock.slot - record.slot,
          err: record.err,
          status: record.err === null ? { Ok: null } : { Err: record.err },
          confirmationStatus: status,
        };
      }));
    },
    getSignaturesForAddress: (params) => {
      const key = params.address(0, 'address');
      const config = params.config(1);
      const maxSlot = clock.slotAt(config.confirmedCommitment());
      config.checkMinContextSlot(maxSlot);
      const limit = config.integer('limit') ?? MAX_SIGNATURES_FOR_ADDRESS;
      if (limit < 1 || limit > MAX_SIGNATURES_FOR_ADDRESS) throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
      const before = config.string('before');
      const until = config.string('until');
      if (before !== undefined) signatureString(before, 'before');
      if (until !== undefined) signatureString(until, 'until');
      return index.forAddress(key, { before, until, limit, maxSlot }).map((record) => ({
        signature: record.signature,
        slot: record.slot,
        err: record.err,
        memo: null,
        blockTime: record.blockTime,
        confirmationStatus: confirmationStatus(clock, record.slot),
      }));
    },
    getTransaction: (params) => {
      const signature = params.signature(0);
      // The legacy form passes the encoding alone.
      const legacyEncoding = typeof params.raw(1) === 'string' ? params.raw(1) : undefined;
      const config = legacyEncoding === undefined ? params.config(1) : params.config(2);
      const maxSlot = clock.slotAt(config.confirmedCommitment());
      const encoding = legacyEncoding ?? config.get('encoding') ?? 'json';
      if (encoding !== 'json' && encoding !== 'jsonParsed' && encoding !== 'base64' && encoding !== 'base58') {
        throw invalidParams(`Invalid params: unknown encoding ${JSON.stringify(encoding)}`);
      }
      const maxVersion = config.integer('maxSupportedTransactionVersion');
      const record = index.get(signature);
      if (!record || record.slot > maxSlot) return null;
      if (record.version === 0 && maxVersion === undefined) {
        throw new RpcError(
          UNSUPPORTED_TRANSACTION_VERSION,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      let transaction: unknown;
      if (encoding === 'base64') transaction = [record.wire, 'base64'];
      else if (encoding === 'base58') transaction = [base58.decode(encodedBytes(record.wire, 'base64', 'stored transaction')), 'base58'];
      else {
        const tx = decodeTransaction(encodedBytes(record.wire, 'base64', 'stored transaction'));
        transaction = { signatures: tx.signatures.map((s) => base58.decode(s)), message: messageJson(tx.message) };
      }
      return {
        slot: record.slot,
        blockTime: record.blockTime,
        transaction,
        meta: transactionMeta(record),
        ...(maxVersion !== undefined ? { version: record.version } : {}),
      };
    },
    getBlockTime: (params) => {
      const slot = Number(params.u64(0, 'slot'));
      const oldest = clock.history()[0]!.slot;
      if (slot < oldest || slot > clock.slot) throw new RpcError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      return clock.recentSlot(slot).unixTimestamp;
    },
  };
}
