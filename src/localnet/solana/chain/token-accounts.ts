import type { LiteSVM } from 'litesvm';
import { address, getBase58Decoder, type EncodedAccount } from '@solana/kit';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** The uiTokenAmount object of getTokenAccountBalance and pre/postTokenBalances. */
export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number | null;
  uiAmountString: string;
}

export interface TokenAccountState {
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
}

const TOKEN_ACCOUNT_SIZE = 165;
const ACCOUNT_STATE_OFFSET = 108;
const MINT_SIZE = 82;
const MINT_DECIMALS_OFFSET = 44;
const base58 = getBase58Decoder();

function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

/** The SPL Token (or Token-2022) account at `key`, when it is an initialized token account. */
export function readTokenAccount(svm: LiteSVM, key: string): TokenAccountState | undefined {
  const account = svm.getAccount(address(key));
  return account.exists ? decodeTokenAccount(account) : undefined;
}

/** `account` as an SPL Token (or Token-2022) account, when it is an initialized one. */
export function decodeTokenAccount(account: EncodedAccount): TokenAccountState | undefined {
  if (!isTokenProgram(account.programAddress)) return undefined;
  const data = account.data;
  if (data.length < TOKEN_ACCOUNT_SIZE) return undefined;
  // Token-2022 extended accounts carry an account-type byte (2 = Account) after the base layout.
  if (data.length > TOKEN_ACCOUNT_SIZE && (account.programAddress !== TOKEN_2022_PROGRAM || data[TOKEN_ACCOUNT_SIZE] !== 2)) return undefined;
  if (data[ACCOUNT_STATE_OFFSET] === 0) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    mint: base58.decode(data.subarray(0, 32)),
    owner: base58.decode(data.subarray(32, 64)),
    programId: account.programAddress,
    amount: view.getBigUint64(64, true),
  };
}

/** The decimals of the mint at `key`, when it is an SPL Token (or Token-2022) mint. */
export function readMintDecimals(svm: LiteSVM, key: string): number | undefined {
  const account = svm.getAccount(address(key));
  if (!account.exists || !isTokenProgram(account.programAddress) || account.data.length < MINT_SIZE) return undefined;
  return account.data[MINT_DECIMALS_OFFSET];
}

/** The exact decimal string of `amount` base units, trailing zeros trimmed ("1.5", "0", "1000"). */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  return { amount: amount.toString(), decimals, uiAmount: Number(amount) / 10 ** decimals, uiAmountString: uiAmountString(amount, decimals) };
}

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

/**
 * The token balances of a transaction's accounts, as in meta.preTokenBalances / postTokenBalances.
 * `skip` holds the indexes of the programs it invokes: never token accounts, and reading them would
 * copy their whole ELF.
 */
export function tokenBalances(svm: LiteSVM, keys: readonly string[], skip: ReadonlySet<number>): TokenBalance[] {
  const out: TokenBalance[] = [];
  keys.forEach((key, accountIndex) => {
    if (skip.has(accountIndex)) return;
    const token = readTokenAccount(svm, key);
    if (!token) return;
    const decimals = readMintDecimals(svm, token.mint);
    if (decimals === undefined) return;
    out.push({ accountIndex, mint: token.mint, owner: token.owner, programId: token.programId, uiTokenAmount: uiTokenAmount(token.amount, decimals) });
  });
  return out;
}
