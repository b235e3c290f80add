import { sql } from 'kysely';
import { createApp } from './apps.ts';
import type { Db } from './database.ts';

/**
 * What `hashlock solver` keeps of the orders the service matched to it (src/solver-process/order-mirror.ts):
 * their events under the service's own ids, so the newest is where its stream resumes.
 */

/** The id of the app named `name`, created (with a key nobody is given) on first use. */
export async function appIdNamed(db: Db, name: string): Promise<string> {
  const app = await db.selectFrom('apps').select('id').where('name', '=', name).executeTakeFirst();
  return app?.id ?? (await createApp(db, { name })).app.id;
}

/** The newest event's id, or undefined with none. */
export async function newestOrderEventId(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom('order_events').select(sql<string | null>`max(id)::text`.as('id')).executeTakeFirst();
  return row?.id ?? undefined;
}

/** Records an event as the service recorded it, under its id; once. */
export async function recordMirroredEvent(
  db: Db,
  event: { id: string; orderId: string; appId: string; solverId: string; status: string; orderJson: string },
): Promise<void> {
  await db
    .insertInto('order_events')
    .values({ id: event.id, order_id: event.orderId, app_id: event.appId, solver_id: event.solverId, status: event.status, order_json: event.orderJson })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}
