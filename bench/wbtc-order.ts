// The order the settlement benches' clients create: WBTC from ethereum_localnet to arbitrum_localnet.
import { randomBytes } from 'node:crypto';

/** A `POST /v2/orders` body for `amount` base units of WBTC, a fresh nonce each time. */
export const wbtcOrderBody = (owner: string, amount: bigint, destinationAmount: string) => ({
  source: { asset: 'ethereum_localnet:wbtc', owner, amount: amount.toString() },
  destination: { asset: 'arbitrum_localnet:wbtc', owner, amount: destinationAmount },
  nonce: randomBytes(10).toString('hex'),
});
