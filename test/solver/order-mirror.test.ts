// The order mirror of `hashlock solver`: an order as the service's matched-orders stream carries it
// becomes the same order, with the same swap terms, in the solver's own database; events are kept
// under the service's ids, once, and the newest is where the stream resumes after a restart.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventJson } from '../../src/events/order-event.ts';
import { orderJson } from '../../src/orders/order-json.ts';
import { OrderMirror } from '../../src/solver-process/order-mirror.ts';
import type { Store } from '../../src/store/database.ts';
import { findOrder, insertOrder, type OrderRecord } from '../../src/store/orders.ts';
import { sampleOrder, seedBasics, SOLVER } from '../helpers/fixtures.ts';
import { openTestStore } from '../helpers/stores.ts';

let service: Store;
let solver: Store;
let appId: string;
before(async () => {
  [service, solver] = await Promise.all([openTestStore('pglite'), openTestStore('pglite')]);
  appId = (await seedBasics(service.db)).app.id;
  await seedBasics(solver.db);
});
after(async () => {
  await service.close();
  await solver.close();
});

/** An order of the service and its `created` event as the stream sends it. */
async function matched(id: number, overrides: Parameters<typeof sampleOrder>[1] = {}): Promise<{ order: OrderRecord; data: string }> {
  const order = sampleOrder(appId, overrides);
  await insertOrder(service.db, order);
  const record = (await findOrder(service.db, order.id))!;
  const data = eventJson({ id: String(id), type: 'order.status', orderId: record.id, appId, solverId: record.solverId, status: 'created', createdAt: '2026-11-28T00:00:00.000000Z', orderJson: orderJson(record, 'created') });
  return { order: record, data };
}

const terms = (o: OrderRecord) => ({
  id: o.id,
  solverId: o.solverId,
  secretHash: o.secretHash,
  deadline: o.deadline,
  sides: [o.source, o.destination].map((s) => [s.swapId, s.chain, s.asset, s.initiator, s.redeemer, s.delegate, s.timelock, s.amount, s.requiredConfirmations]),
});

test('a matched order is mirrored with the same terms, its event once under the service id, and the stream resumes after it', async () => {
  const mirror = new OrderMirror(solver.db, SOLVER.id);
  await mirror.open();
  assert.equal(mirror.resumeFrom(), '0', 'a fresh store replays from the first event');
  const { order, data } = await matched(41);
  assert.deepEqual(await mirror.apply(data), { orderId: order.id, isNew: true });
  assert.deepEqual(terms((await findOrder(solver.db, order.id))!), terms(order));
  assert.deepEqual(await mirror.apply(data), { orderId: order.id, isNew: false }, 'applied again (a replay after a restart): nothing new');
  const events = await solver.db.selectFrom('order_events').select(['id', 'status']).where('order_id', '=', order.id).execute();
  assert.deepEqual(events.map((e) => [String(e.id), e.status]), [['41', 'created']]);

  const restarted = new OrderMirror(solver.db, SOLVER.id);
  await restarted.open();
  assert.equal(restarted.resumeFrom(), '41');
});

test("another solver's order is refused, and nothing of it is kept", async () => {
  const mirror = new OrderMirror(solver.db, 'maker-x');
  await mirror.open();
  const { order, data } = await matched(42);
  await assert.rejects(mirror.apply(data), /is matched to 0x7099.*, not to this solver/);
  assert.equal(await findOrder(solver.db, order.id), undefined);
});
