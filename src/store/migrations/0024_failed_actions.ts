import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * A client's relayed action that failed is told to the client: the order read lists its failed
 * action jobs, and the event log records an `order.action_failed` event when one fails (the head
 * remembers which failures were told). A job failing, or being asked for again, changes what the
 * order read shows, so it notifies `order_changed` as a change of the order's rows does.
 *
 * A simulation that reverted is tried again only once the chain has a new block (`refused_at_height`:
 * the chain's height when it was refused), or a while later: the same call on the same state reverts again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table relayer_jobs add column refused_at_height bigint;
    alter table order_events add column type text not null default 'order.status';
    alter table order_event_heads add column failures text not null default '';
    create function notify_order_job_failed() returns trigger language plpgsql as $$
    begin
      if new.order_id is not null and ((new.status = 'failed') <> (old.status = 'failed')) then
        perform pg_notify('order_changed', new.order_id);
      end if;
      return null;
    end $$;
    create trigger relayer_jobs_order_failed after update of status on relayer_jobs
      for each row execute function notify_order_job_failed();
    `,
  );
}
