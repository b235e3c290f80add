import { xOnlyPublicKeyOf } from './address.ts';
import type { Db } from '../../store/database.ts';
import { delegateKeyCiphertext, type SwapRecord } from '../../store/orders.ts';
import type { SecretBox } from '../../orders/secret-box.ts';

/**
 * The per-order key the service holds for a client that gave no delegate key of its own
 * (`orders.delegate_key_ciphertext`), when it is the key `swap`'s script names: on an order with two
 * Bitcoin-family sides the service may hold the key of the other side only. Undefined otherwise.
 */
export async function openServiceKey(db: Db, secrets: SecretBox, orderId: string, swap: SwapRecord): Promise<Uint8Array | undefined> {
  const sealed = await delegateKeyCiphertext(db, orderId);
  if (!sealed) return undefined;
  const key = secrets.open(sealed);
  return xOnlyPublicKeyOf(key) === swap.delegate.toLowerCase() ? key : undefined;
}
