// What the Garden SDK tests read of @gardenfi/utils and of the SDK's orders, typed here by hand: the
// SDK's declarations re-export most names with paths NodeNext cannot follow.
import * as gardenUtils from '@gardenfi/utils';

export const { DigestKey, Network } = gardenUtils as unknown as {
  DigestKey: { generateRandom(): { val?: { digestKey: string } } };
  Network: { LOCALNET: 'localnet' };
};

/** A leg of an order as the SDK's getOrder returns it. */
export interface SdkSwap {
  secret: string;
  initiate_tx_hash: string;
  redeem_tx_hash: string;
  redeem_block_number: string | null;
}

/** An order as the SDK's getOrder returns it (`status` is the SDK's reading, e.g. `Redeemed`). */
export interface SdkOrder {
  order_id: string;
  status: string;
  source_swap: SdkSwap;
  destination_swap: SdkSwap;
}
