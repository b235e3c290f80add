import { address, type Address } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { solanaRpc } from './rpc.ts';

/**
 * An owner's confirmed balance and the slot it was read at: lamports when `mint` is undefined, else
 * the base units in its associated token account for `mint` (0 when it has none). The amount of an
 * SPL token account is the u64 after its mint and owner (32 bytes each).
 */
export async function solanaBalance(
  rpc: ReturnType<typeof solanaRpc>,
  owner: Address,
  mint: string | undefined,
): Promise<{ balance: bigint; slot: bigint }> {
  if (mint === undefined) {
    const { context, value } = await rpc.getBalance(owner, { commitment: 'confirmed' }).send();
    return { balance: value, slot: context.slot };
  }
  const [account] = await findAssociatedTokenPda({ owner, mint: address(mint), tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { context, value } = await rpc.getAccountInfo(account, { commitment: 'confirmed', encoding: 'base64' }).send();
  return { balance: value ? Buffer.from(value.data[0], 'base64').readBigUInt64LE(64) : 0n, slot: context.slot };
}
