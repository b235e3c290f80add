import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Order creation as one function call: the order arrives as one jsonb value, so the statement text
 * is tiny and the plans are cached per session (it was the hottest write, re-parsed every time).
 * The liquidity reservation runs last, so the solver's balance row is locked only until commit;
 * when there is not enough, SQLSTATE HL001 undoes the inserts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create function create_order(o jsonb, reservation jsonb) returns void language plpgsql as $$
    begin
      insert into orders (id, app_id, nonce, solver_id, integrator, version, slippage, secret_hash,
        secret_ciphertext, delegate_key_ciphertext, request_hash, deadline)
      values (o->>'id', o->>'app_id', o->>'nonce', o->>'solver_id', o->>'integrator', o->>'version',
        (o->>'slippage')::int, o->>'secret_hash', decode(o->>'secret_ciphertext', 'hex'),
        decode(o->>'delegate_key_ciphertext', 'hex'), o->>'request_hash', (o->>'deadline')::bigint);

      insert into swaps (order_id, side, swap_id, chain, asset, initiator, redeemer, delegate, timelock,
        amount, asset_price, required_confirmations, secret_hash)
      select o->>'id', s->>'side', s->>'swap_id', s->>'chain', s->>'asset', s->>'initiator', s->>'redeemer',
        s->>'delegate', (s->>'timelock')::bigint, (s->>'amount')::numeric, (s->>'asset_price')::float8,
        (s->>'required_confirmations')::int, o->>'secret_hash'
      from jsonb_array_elements(o->'swaps') as s;

      insert into quotes (order_id, solver_id, source_asset, destination_asset, source_amount,
        destination_amount, source_price, destination_price, fee_bips, fixed_fee, slippage, estimated_time, deadline)
      select o->>'id', o->>'solver_id', q->>'source_asset', q->>'destination_asset', (q->>'source_amount')::numeric,
        (q->>'destination_amount')::numeric, (q->>'source_price')::float8, (q->>'destination_price')::float8,
        (q->>'fee_bips')::int, q->>'fixed_fee', (o->>'slippage')::int, (q->>'estimated_time')::int,
        (o->>'deadline')::bigint
      from (select o->'quote' as q) as quote;

      insert into affiliate_fees (order_id, position, address, fee_bips, asset, amount)
      select o->>'id', (f.position - 1)::int, f.fee->>'address', (f.fee->>'fee')::int, f.fee->>'asset',
        (f.fee->>'amount')::numeric
      from jsonb_array_elements(o->'fees') with ordinality as f(fee, position);

      if reservation is not null then
        update solver_balances set committed = committed + (reservation->>'amount')::numeric
        where solver_id = reservation->>'solver_id' and asset = reservation->>'asset'
          and balance - committed >= (reservation->>'amount')::numeric;
        if not found then
          raise exception 'insufficient liquidity' using errcode = 'HL001';
        end if;
      end if;
    end $$;
  `,
  );
}
