import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import Fastify, { type FastifyInstance } from 'fastify';
import { EventHub } from '../../src/events/event-hub.ts';
import { ORDER_EVENT_CHANNEL } from '../../src/events/order-event.ts';
import type { Store } from '../../src/store/database.ts';
import { seedBasics } from '../helpers/fixtures.ts';
import { SseClient } from '../helpers/sse.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { recordEvent } from '../helpers/webhooks.ts';

describeEachStore('an event stream whose filter cannot be asked', (kind) => {
  let store: Store;
  let appId: string;
  let server: FastifyInstance;
  let stopHub: () => Promise<void>;
  let base: string;
  let failing = true;
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
    const hub = new EventHub(store.db);
    stopHub = await hub.start(store);
    server = Fastify();
    server.get('/events', async (request, reply) =>
      hub.serveStream(request, reply, {
        appId,
        accept: async () => {
          if (failing) throw new Error('the database is away');
          return true;
        },
      }),
    );
    base = await server.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await stopHub();
    await server.close();
    await store.close();
  });

  test('ends the stream instead of skipping the event, and the resumed stream gets it; the process lives on', async () => {
    const first = await SseClient.open(`${base}/events`);
    const previous = (await store.db.selectFrom('order_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? '0';
    const event = await recordEvent(store.db, appId, 'initiated');
    // As the recorder announces an event (src/store/order-events.ts): a notification without a payload is not heard.
    await sql`select pg_notify(${ORDER_EVENT_CHANNEL}, ${event.id})`.execute(store.db);
    await first.until(() => first.closed, 5_000, 'the stream to end');
    assert.equal(first.events.length, 0, 'nothing was sent past the failed filter');
    failing = false;
    const resumed = await SseClient.open(`${base}/events`, { 'last-event-id': String(previous) });
    try {
      await resumed.until(() => resumed.events.length >= 1, 5_000, 'the event on resuming');
      assert.equal(resumed.events[0]!.id, event.id);
    } finally {
      resumed.close();
    }
  });
});
