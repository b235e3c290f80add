// Webhook tests: real HTTP receivers on loopback ports, and order events recorded on real orders.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OrderEvent } from '../../src/events/order-event.ts';
import type { OrderStatus } from '../../src/orders/status.ts';
import { toRfc3339Micro, type Db } from '../../src/store/database.ts';
import { orderJson as orderJsonOf } from '../../src/orders/order-json.ts';
import { findOrder, insertOrder } from '../../src/store/orders.ts';
import { sampleOrder } from './fixtures.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers each request; the default answers 200. A handler that never ends the response leaves it hanging. */
  handle: (request: Received, response: ServerResponse, index: number) => void;
  close(): Promise<void>;
}

/** An HTTP server on a free 127.0.0.1 port that records every request. */
export async function startReceiver(handle: Receiver['handle'] = (_req, res) => res.end('ok')): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], handle, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      receiver.received.push(request);
      receiver.handle(request, res, receiver.received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Creates a real order of the app and records an event of it, as the event recorder would. */
export async function recordEvent(db: Db, appId: string, status: OrderStatus, orderId?: string): Promise<OrderEvent> {
  let id = orderId;
  if (id === undefined) {
    const order = sampleOrder(appId);
    await insertOrder(db, order);
    id = order.id;
  }
  const order = (await findOrder(db, id))!;
  const orderJson = orderJsonOf(order, status);
  const row = await db
    .insertInto('order_events')
    .values({ order_id: id, app_id: appId, solver_id: order.solverId, status, order_json: orderJson })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, type: 'order.status', orderId: id, appId, solverId: order.solverId, status, createdAt: toRfc3339Micro(row.created_at), orderJson };
}
