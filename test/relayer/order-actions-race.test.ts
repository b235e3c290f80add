// Identical action requests that race: one writes the job and it lands before another reads the
// chain, whose refusal ("already initiated") must then answer with that job, not a 409 (rule 6).
// The family's actions are a stand-in here so the interleaving is exact; the real chains' run of
// ten concurrent PATCHes is in test/api/order-actions.test.ts and test/e2e/solana-swap.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClientActions } from '../../src/chains/adapter.ts';
import { AppError } from '../../src/errors.ts';
import { jobKey } from '../../src/relayer/actions.ts';
import { OrderActions } from '../../src/relayer/order-actions.ts';
import type { App } from '../../src/store/apps.ts';
import type { Registry } from '../../src/chains/registry.ts';
import type { Store } from '../../src/store/database.ts';
import { insertOrder, type OrderRecord } from '../../src/store/orders.ts';
import { enqueueJob, type RelayerJob } from '../../src/store/relayer-jobs.ts';
import { sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { openTestStore } from '../helpers/stores.ts';

let store: Store;
let app: App;
let registry: Registry;
before(async () => {
  store = await openTestStore('pglite');
  ({ app, registry } = await seedBasics(store.db));
});
after(() => store.close());

/** Actions whose chain read always finds the action done; `meanwhile` runs between lookup and read. */
function actionsThatFindItDone(code: 'already_initiated' | 'secret_mismatch', meanwhile: (order: OrderRecord) => Promise<unknown>): ClientActions {
  return {
    async perform(order) {
      await meanwhile(order);
      throw new AppError(code, `order ${order.id}: refused (${code})`);
    },
  };
}

async function newOrder(): Promise<OrderRecord['id']> {
  const order = sampleOrder(app.id);
  await insertOrder(store.db, order);
  return order.id;
}

const orderActions = (actions: ClientActions) => new OrderActions(store.db, registry, { actionsFor: () => actions, waitMs: 0 });

const writeJob = (orderId: string) =>
  enqueueJob(store.db, { chain: 'ethereum_localnet', orderId, action: 'initiate', idempotencyKey: jobKey(orderId, 'initiate'), payload: {} });

test('an already_initiated refusal after an identical request wrote the job answers with that job', async () => {
  const id = await newOrder();
  let written: RelayerJob | undefined;
  const actions = actionsThatFindItDone('already_initiated', async (order) => {
    written = (await writeJob(order.id)).job;
  });
  const job = await orderActions(actions).perform(app, id, 'initiate', {});
  assert.equal(job.id, written!.id);
  assert.equal(job.idempotencyKey, `${id}:initiate`);
});

test('with no job of the action, or only a failed one, the refusal stands', async () => {
  const id = await newOrder();
  const actions = actionsThatFindItDone('already_initiated', async () => undefined);
  await assert.rejects(orderActions(actions).perform(app, id, 'initiate', {}), (err: AppError) => err.code === 'already_initiated');
  const { job } = await writeJob(id);
  await store.db.updateTable('relayer_jobs').set({ status: 'failed' }).where('id', '=', job.id).execute();
  await assert.rejects(orderActions(actions).perform(app, id, 'initiate', {}), (err: AppError) => err.code === 'already_initiated');
});

test('a refusal of the request itself (a wrong secret) stands even when the job exists', async () => {
  const id = await newOrder();
  await writeJob(id);
  const actions = actionsThatFindItDone('secret_mismatch', async () => undefined);
  await assert.rejects(orderActions(actions).perform(app, id, 'initiate', {}), (err: AppError) => err.code === 'secret_mismatch');
});
