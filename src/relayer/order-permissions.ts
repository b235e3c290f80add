import { chainAdapter } from '../chains/adapters.ts';
import type { Registry } from '../chains/registry.ts';
import { AppError } from '../errors.ts';
import type { App } from '../store/apps.ts';
import type { OrderRecord } from '../store/orders.ts';
import type { RelayerAction } from './actions.ts';

/**
 * Who may ask for an order action (docs/api.md, "Who may act on an order"). This is the one place
 * it is decided; the proof an action needs (a signature, the secret) is checked by the action itself.
 * - Only the app that created the order acts on it.
 * - An action the service pays for needs the app's gasless flag: every EVM action (the relayer pays
 *   the gas) and a Bitcoin-family instant refund (a fee input from the solver's wallet). A
 *   Bitcoin-family redeem or refund pays its fee out of the HTLC's own outputs: the client pays.
 */
export function checkMayAct(registry: Registry, app: App, order: OrderRecord, action: RelayerAction): void {
  if (order.appId !== app.id) throw new AppError('forbidden', `${action}: order ${order.id} was created by another app; only that app may act on it`);
  if (servicePays(registry, order, action) && !app.gasless) {
    throw new AppError('forbidden', `${action}: gasless actions are not enabled for this app (the service would pay for this one)`);
  }
}

/** Whether the service, not the client, pays to put the action on chain. */
export function servicePays(registry: Registry, order: OrderRecord, action: RelayerAction): boolean {
  const side = action === 'redeem' ? order.destination : order.source;
  const chain = registry.chain(side.chain);
  return !chain || (chainAdapter(chain)?.servicePays(action) ?? true);
}
