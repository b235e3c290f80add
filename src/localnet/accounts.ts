import type { Hex } from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';

/** anvil's own default dev mnemonic (accounts 0..9 are funded with 10,000 ether on start): public, never for real funds. */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Roles of anvil's funded dev accounts on the local chains. */
export const DEV_ACCOUNTS = { deployer: 0, solver: 1, relayer: 2, user: 3, feeSigner: 4 } as const;

export const devAccount = (role: keyof typeof DEV_ACCOUNTS): HDAccount =>
  mnemonicToAccount(DEV_MNEMONIC, { addressIndex: DEV_ACCOUNTS[role] });

export const privateKeyOf = (account: HDAccount): Hex => `0x${Buffer.from(account.getHdKey().privateKey!).toString('hex')}`;
