import { xOnlyPublicKeyOf } from './address.ts';
import type { Db } from '../../store/database.ts';
import { delegateKeyCiphertext, type SwapRecord } from '../../store/orders.ts';
import type { SecretBox } from '../../orders/secret-box.ts';
import { AppError } from '../../errors.ts';

/**
 * The per-order key the service holds for a client that gave no delegate key of its own
 * (`orders.delegate_key_ciphertext`), when it is the key `swap`'s script names: on an order with two
 * Bitcoin-family sides the service may hold the key of the other side only. Undefined otherwise.
 */
export async function openServiceKey(db: Db, secrets: SecretBox, orderId: string, swap: SwapRecord): Promise<Uint8Array | undefined> {
  const sealed = await delegateKeyCiphertext(db, orderId);
  if (!sealed) return undefined;
  if (!secrets.canOpen) {
    throw new AppError(
      'unavailable',
      `order ${orderId}: this instance answers the API and holds no key, and the action signs with the key the service holds for the client: send it to an instance that runs the workers, or pass delegate (your own key) when creating orders`,
    );
  }
  const key = secrets.open(sealed);
  return xOnlyPublicKeyOf(key) === swap.delegate.toLowerCase() ? key : undefined;
}
