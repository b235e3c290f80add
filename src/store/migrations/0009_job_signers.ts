import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Every on-chain action of the service goes through `relayer_jobs`: the relayer's gasless actions
 * and, now, the solver's own fundings, redeems and refunds. `signer` names the account that signs a
 * job's transaction; each (chain, signer) has its own worker and its own nonce sequence, so the
 * queue indexes lead with both.
 *
 * A job that becomes due notifies 'job_queued' with `<chain>:<signer>` at commit, so the instance
 * running that sender sends it at once, whichever instance queued it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table relayer_jobs add column signer text not null default 'relayer' check (signer in ('relayer', 'solver'));
    drop index relayer_jobs_ready;
    create index relayer_jobs_ready on relayer_jobs (chain, signer, run_after)
      where status in ('queued', 'running', 'submitted');
    drop index relayer_jobs_signed;
    create index relayer_jobs_signed on relayer_jobs (chain, signer, nonce)
      where raw_tx <> '' and status in ('queued', 'running', 'submitted');
    -- The solver's passes skip an order whose step already has a live job.
    create index relayer_jobs_order on relayer_jobs (order_id, action) where order_id is not null;

    create function notify_job_queued() returns trigger language plpgsql as $$
    begin
      perform pg_notify('job_queued', new.chain || ':' || new.signer);
      return null;
    end $$;
    create trigger relayer_jobs_queued after insert or update of status on relayer_jobs
      for each row when (new.status = 'queued' and new.run_after <= now())
      execute function notify_job_queued();
  `,
  );
}
