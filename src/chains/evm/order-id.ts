import { concat, numberToHex, pad, sha256, type Address, type Hex } from 'viem';

export interface EvmOrderTerms {
  chainId: bigint;
  secretHash: Hex;
  initiator: Address;
  redeemer: Address;
  timelock: bigint;
  amount: bigint;
  htlc: Address;
}

const word = (value: bigint): Hex => numberToHex(value, { size: 32 });

/**
 * The HTLC contract's order id:
 * sha256(abi.encode(block.chainid, secretHash, initiator, redeemer, timelock, amount, address(this))).
 * Every argument is static, so abi.encode is just seven 32-byte words; built directly because this
 * runs twice per order creation and viem's generic encoder showed in profiles.
 */
export function evmOrderId(t: EvmOrderTerms): Hex {
  return sha256(
    concat([word(t.chainId), t.secretHash, pad(t.initiator), pad(t.redeemer), word(t.timelock), word(t.amount), pad(t.htlc)]),
  );
}
