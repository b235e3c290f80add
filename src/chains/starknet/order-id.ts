import { hash, shortString } from 'starknet';
import { secretHashWords, starknetAddress } from './felt.ts';

/**
 * The Starknet HTLC's order id: Poseidon over [chain_id, secret_hash as 8 u32 words, initiator], as
 * `generate_order_id` of Garden's Cairo HTLC computes it (PoseidonTrait: update(chain_id),
 * update_with([u32; 8]) word by word, update(initiator), finalize; the same sponge as
 * `poseidon_hash_span` / starknet.js `computePoseidonHashOnElements`).
 *
 * Uncertain (see reference/garden-facts.md §5.2): that source snapshot hard-codes CHAIN_ID =
 * 'SN_SEPOLIA'; here chain_id is the chain's own network shortstring, which is what a mainnet
 * deployment of the same code would use. Later Garden revisions (2025 audit snapshot) read chain_id
 * from the transaction, take the secret hash as [u128; 2] and also hash redeemer, timelock,
 * amount.low, amount.high and the contract address; such a deployment needs a different formula.
 * Returned as 0x + 64 lowercase hex.
 */
export function starknetOrderId(input: { network: string; secretHash: string; initiator: string }): string {
  const elements = [
    shortString.encodeShortString(input.network),
    ...secretHashWords(input.secretHash).map((w) => BigInt(w)),
    starknetAddress(input.initiator, 'initiator'),
  ];
  const id = BigInt(hash.computePoseidonHashOnElements(elements));
  return `0x${id.toString(16).padStart(64, '0')}`;
}
