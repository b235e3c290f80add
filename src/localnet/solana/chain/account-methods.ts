import { address, isAddress, type EncodedAccount } from '@solana/kit';
import { accountEncoding, dataSlice, encodeAccount } from './account-encoding.ts';
import { invalidParams } from './rpc-error.ts';
import { withContext, type RpcMethod, type RpcMethodContext } from './rpc-method.ts';
import { decodeBase58, decodeBase64, Params, type Config } from './rpc-params.ts';
import { decodeTokenAccount, readMintDecimals, readTokenAccount, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, uiTokenAmount } from './token-accounts.ts';

const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_FILTERS = 4;
const MAX_MEMCMP_BYTES = 128;

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

/**
 * The methods that read accounts. They return the latest state at every commitment (LiteSVM keeps
 * no other), and say so in context.slot.
 */
export function accountMethods(ctx: RpcMethodContext): Record<string, RpcMethod> {
  const { clock } = ctx;
  const accountRead = (config: Config) => {
    config.commitment();
    config.checkMinContextSlot(clock.slot);
  };
  const readAccount = (key: string): EncodedAccount | null => {
    const account = ctx.svm.getAccount(address(key));
    return account.exists ? account : null;
  };
  return {
    getBalance: (params) => {
      const key = params.address(0);
      accountRead(params.config(1));
      return withContext(ctx.svm.getBalance(address(key)) ?? 0n, clock.slot);
    },
    getAccountInfo: (params) => {
      const key = params.address(0);
      const config = params.config(1);
      accountRead(config);
      const encoding = accountEncoding(config.get('encoding'), 'binary');
      const slice = dataSlice(config.get('dataSlice'));
      const account = readAccount(key);
      return withContext(account && encodeAccount(account, encoding, slice), clock.slot);
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
      }), clock.slot);
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
      return config.boolean('withContext', false) ? withContext(accounts, clock.slot) : accounts;
    },
    getTokenAccountBalance: (params) => {
      const key = params.address(0);
      accountRead(params.config(1));
      if (!readAccount(key)) throw invalidParams('Invalid param: could not find account');
      const token = readTokenAccount(ctx.svm, key);
      if (!token) throw invalidParams('Invalid param: not a Token account');
      const decimals = readMintDecimals(ctx.svm, token.mint);
      if (decimals === undefined) throw invalidParams('Invalid param: could not find mint');
      return withContext(uiTokenAmount(token.amount, decimals), clock.slot);
    },
    getTokenAccountsByOwner: (params) => {
      const owner = params.address(0, 'owner');
      const filter = params.raw(1);
      const config = params.config(2);
      accountRead(config);
      const encoding = accountEncoding(config.get('encoding'), 'binary');
      const slice = dataSlice(config.get('dataSlice'));
      let program: string;
      let mint: string | undefined;
      if (filter !== null && typeof filter === 'object' && 'mint' in filter && typeof filter.mint === 'string') {
        mint = filter.mint;
        const mintAccount = isAddress(mint) ? readAccount(mint) : null;
        if (!mintAccount) throw invalidParams('Invalid param: could not find mint');
        program = mintAccount.programAddress;
      } else if (filter !== null && typeof filter === 'object' && 'programId' in filter && typeof filter.programId === 'string') {
        program = filter.programId;
      } else {
        throw invalidParams('Invalid params: the second param must be { mint } or { programId }');
      }
      if (program !== TOKEN_PROGRAM && program !== TOKEN_2022_PROGRAM) throw invalidParams('Invalid param: unrecognized Token program id');
      const accounts = ctx.svm
        .getProgramAccounts(address(program))
        .filter((account) => {
          const token = decodeTokenAccount(account);
          return token !== undefined && token.owner === owner && (mint === undefined || token.mint === mint);
        })
        .map((account) => ({ pubkey: account.address, account: encodeAccount(account, encoding, slice) }));
      return withContext(accounts, clock.slot);
    },
  };
}
