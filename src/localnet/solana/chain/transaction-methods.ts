import { getBase58Decoder } from '@solana/kit';
import { accountEncoding, encodeAccount } from './account-encoding.ts';
import { decodeTransaction } from './transaction-checks.ts';
import { invalidParams, RpcError, UNSUPPORTED_TRANSACTION_VERSION } from './rpc-error.ts';
import { withContext, type RpcMethod, type RpcMethodContext } from './rpc-method.ts';
import { encodedBytes, Params, signatureString } from './rpc-params.ts';
import type { TransactionRecord } from './signature-index.ts';
import type { Commitment, SlotClock } from './slot-clock.ts';
import type { ParsedMessage } from './wire-transaction.ts';

/** The validator's status cache: without searchTransactionHistory, statuses older than this many slots are not found. */
const STATUS_CACHE_SLOTS = 300;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_SIGNATURES_FOR_ADDRESS = 1000;

const base58 = getBase58Decoder();

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

/** The methods that send, simulate and look up transactions and their signatures. */
export function transactionMethods(ctx: RpcMethodContext): Record<string, RpcMethod> {
  const { ledger, clock, index } = ctx;
  return {
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
      return withContext({ ...value, accounts: value.accounts && value.accounts.map((a) => a && encodeAccount(a, encoding)) }, clock.slot);
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
      }), clock.slot);
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
  };
}
