import type { Db } from '../store/database.ts';
import { appIdNamed, newestOrderEventId, recordMirroredEvent } from '../store/mirrored-orders.ts';
import { findOrder, insertOrder, type NewOrder, type NewSwap } from '../store/orders.ts';
import type { OrderView } from '../orders/order-view.ts';

/** The local app every mirrored order belongs to (orders need one): the service that matched them. */
const SERVICE_APP = 'hashlock service (mirrored orders)';

/** An event of `GET /solver/v1/orders/events`, as `eventJson` writes it. */
interface MatchedOrderEvent {
  id: string;
  order_id: string;
  status: string;
  created_at: string;
  order: OrderView;
}

/**
 * A `hashlock solver`'s copy of the orders the service matched to it, in its own database: each order
 * with its swaps as the service created them (the solver's own watchers then record what happens on
 * chain), and each event under the service's event id, so the newest one is where the stream resumes
 * after a restart of either side.
 */
export class OrderMirror {
  private appId: string | undefined;
  private last: string | undefined;

  constructor(
    private readonly db: Db,
    private readonly solverId: string,
  ) {}

  /** Reads where the stream resumes; call once before following it. */
  async open(): Promise<void> {
    this.appId = await appIdNamed(this.db, SERVICE_APP);
    // From the first event on a fresh database: orders matched before the first start are mirrored too.
    this.last = (await newestOrderEventId(this.db)) ?? '0';
  }

  /** The last event mirrored: what the stream resumes from. */
  resumeFrom(): string | undefined {
    return this.last;
  }

  /** Mirrors one event; returns the order id when the order is new here. Idempotent. */
  async apply(data: string): Promise<{ orderId: string; isNew: boolean }> {
    const event = JSON.parse(data) as MatchedOrderEvent;
    const view = event.order;
    if (view.solver_id !== this.solverId) throw new Error(`event ${event.id}: order ${event.order_id} is matched to ${view.solver_id}, not to this solver`);
    let isNew = false;
    if (!(await findOrder(this.db, view.order_id))) {
      await insertOrder(this.db, newOrderOf(view, this.appId!));
      isNew = true;
    }
    await recordMirroredEvent(this.db, { id: event.id, orderId: view.order_id, appId: this.appId!, solverId: view.solver_id, status: event.status, orderJson: JSON.stringify(view) });
    this.last = event.id;
    return { orderId: view.order_id, isNew };
  }
}

/** The order as the service created it, from its view: the terms both HTLCs are checked against. */
export function newOrderOf(view: OrderView, appId: string): NewOrder {
  const swap = (s: OrderView['source_swap']): NewSwap => ({
    swapId: s.swap_id,
    chain: s.chain,
    asset: s.asset,
    initiator: s.initiator,
    redeemer: s.redeemer,
    ...(s.delegate ? { delegate: s.delegate } : {}),
    timelock: BigInt(s.timelock),
    amount: BigInt(s.amount),
    assetPrice: s.asset_price,
    requiredConfirmations: s.required_confirmations,
  });
  return {
    id: view.order_id,
    appId,
    nonce: view.nonce,
    solverId: view.solver_id,
    integrator: view.integrator,
    version: view.version,
    slippage: view.slippage,
    secretHash: view.source_swap.secret_hash,
    deadline: BigInt(view.deadline),
    source: swap(view.source_swap),
    destination: swap(view.destination_swap),
    // The fees are the service's business; the solver needs the swaps' terms only.
    affiliateFees: [],
    quote: { feeBips: 0, fixedFee: '0', estimatedTime: 0 },
  };
}
