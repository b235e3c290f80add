import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * A watcher's poll recorded in one function call (`recordWatcherPoll`): the swap events, the kept
 * block hashes, the cursor, the confirmation counts and the chain height. As statements of a
 * transaction these were eight round trips in the path of every swap's next step.
 *
 * `p`: `initiated`, `redeemed`, `refunded` (arrays of {swap_id, tx_hash, block_number, ts, value},
 * one per swap and kind), `blocks` and `keep_above` (the window's hashes; absent: left alone),
 * `cursor_to` and `cursor_from` (absent `cursor_to`: the cursor stays; null `cursor_from`: none yet),
 * `head`. Returns the swap rows changed. SQLSTATE HL002: another writer moved the cursor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create function record_watcher_poll(p_chain text, p jsonb) returns integer language plpgsql as $$
    declare
      changed integer := 0;
      n integer;
      head bigint := (p->>'head')::bigint;
    begin
      -- Each event writes only its own fields, and a swap already holding it is not touched (no
      -- order_changed): a block applied twice changes nothing. A new initiate block restarts the count.
      update swaps s set (initiate_tx_hash, initiate_block_number, initiate_timestamp, filled_amount) =
          (e.tx_hash, e.block_number, e.ts, e.value::numeric),
        current_confirmations = case when s.initiate_block_number = e.block_number then s.current_confirmations else 0 end
      from jsonb_to_recordset(coalesce(p->'initiated', '[]')) as e(swap_id text, tx_hash text, block_number bigint, ts timestamptz, value text)
      where s.chain = p_chain and s.swap_id = e.swap_id
        and (s.initiate_tx_hash, s.initiate_block_number, s.initiate_timestamp, s.filled_amount)
          is distinct from (e.tx_hash, e.block_number, e.ts, e.value::numeric);
      get diagnostics n = row_count;
      changed := changed + n;

      update swaps s set (redeem_tx_hash, redeem_block_number, redeem_timestamp, secret) = (e.tx_hash, e.block_number, e.ts, e.value)
      from jsonb_to_recordset(coalesce(p->'redeemed', '[]')) as e(swap_id text, tx_hash text, block_number bigint, ts timestamptz, value text)
      where s.chain = p_chain and s.swap_id = e.swap_id
        and (s.redeem_tx_hash, s.redeem_block_number, s.redeem_timestamp, s.secret) is distinct from (e.tx_hash, e.block_number, e.ts, e.value);
      get diagnostics n = row_count;
      changed := changed + n;

      update swaps s set (refund_tx_hash, refund_block_number, refund_timestamp) = (e.tx_hash, e.block_number, e.ts)
      from jsonb_to_recordset(coalesce(p->'refunded', '[]')) as e(swap_id text, tx_hash text, block_number bigint, ts timestamptz, value text)
      where s.chain = p_chain and s.swap_id = e.swap_id
        and (s.refund_tx_hash, s.refund_block_number, s.refund_timestamp) is distinct from (e.tx_hash, e.block_number, e.ts);
      get diagnostics n = row_count;
      changed := changed + n;

      if p ? 'keep_above' then
        insert into watched_blocks (chain, number, hash)
        select p_chain, (b->>'number')::bigint, b->>'hash' from jsonb_array_elements(p->'blocks') as b
        on conflict (chain, number) do update set hash = excluded.hash;
        delete from watched_blocks where chain = p_chain and number <= (p->>'keep_above')::bigint;
      end if;

      if p ? 'cursor_to' then
        if p->>'cursor_from' is null then
          insert into watcher_cursors (chain, block_number) values (p_chain, (p->>'cursor_to')::bigint)
          on conflict (chain) do nothing;
        else
          update watcher_cursors set block_number = (p->>'cursor_to')::bigint, updated_at = now()
          where chain = p_chain and block_number = (p->>'cursor_from')::bigint;
        end if;
        if not found then
          raise exception 'the % watcher cursor moved under this watcher (another instance running?)', p_chain using errcode = 'HL002';
        end if;
      end if;

      -- The cap keeps this cheap: a swap leaves the swaps_confirming index once it reaches its count.
      update swaps set current_confirmations = least(required_confirmations, head - initiate_block_number + 1)
      where chain = p_chain and initiate_block_number <> 0 and current_confirmations < required_confirmations
        and initiate_block_number <= head and current_confirmations <> least(required_confirmations, head - initiate_block_number + 1);
      get diagnostics n = row_count;
      changed := changed + n;

      insert into chain_heights (chain, height) values (p_chain, head)
      on conflict (chain) do update set height = excluded.height, updated_at = now();
      return changed;
    end
    $$;
    `,
  );
}
