import type { Hex, LocalAccount } from 'viem';

/** The `typed_data` of a created order whose source is an EVM token: what a gasless initiate signs. */
export interface InitiateTypedData {
  domain: { name: string; version: string; chainId: string | number; verifyingContract: Hex };
  types: { Initiate: Array<{ name: string; type: string }> };
  message: { redeemer: Hex; timelock: string; amount: string; secretHash: Hex };
}

/** The client's EIP-712 signature of an order's Initiate, as a wallet makes it (PATCH ?action=initiate). */
export const signGaslessInitiate = (account: LocalAccount, typedData: InitiateTypedData): Promise<Hex> =>
  account.signTypedData({
    domain: { ...typedData.domain, chainId: BigInt(typedData.domain.chainId) },
    types: { Initiate: typedData.types.Initiate },
    primaryType: 'Initiate',
    message: { ...typedData.message, timelock: BigInt(typedData.message.timelock), amount: BigInt(typedData.message.amount) },
  });
