import type { Hex } from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';

/** anvil's own default dev mnemonic (accounts 0..9 are funded with 10,000 ether on start): public, never for real funds. */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Roles of anvil's funded dev accounts on the local chains. */
export const DEV_ACCOUNTS = { deployer: 0, solver: 1, relayer: 2, user: 3, feeSigner: 4, maker: 5 } as const;

const derived = new Map<keyof typeof DEV_ACCOUNTS, HDAccount>();

/** A role's account, derived once per process (each derivation runs the mnemonic's 2,048 PBKDF2 rounds). */
export function devAccount(role: keyof typeof DEV_ACCOUNTS): HDAccount {
  let account = derived.get(role);
  if (!account) {
    account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: DEV_ACCOUNTS[role] });
    derived.set(role, account);
  }
  return account;
}

export const privateKeyOf = (account: HDAccount): Hex => `0x${Buffer.from(account.getHdKey().privateKey!).toString('hex')}`;
