import { sql } from 'kysely';
import type { Db } from '../../../store/database.ts';

/**
 * The outputs of watched Bitcoin-family scripts (table `bitcoin_utxos`, migration 0008) and the swap
 * fields derived from them. Every statement is keyed by chain and by the outpoints, addresses or
 * transactions at hand, so its cost follows the chain, never the number of orders.
 */

/** An output paying a watched script, as the watcher found it. */
export interface NewUtxo {
  txid: string;
  vout: number;
  /** scriptPubKey, hex. */
  script: string;
  /** The watched address the script encodes: an HTLC's swap_id, or a wallet address. */
  address: string;
  value: bigint;
  /** null while the transaction is only in the mempool. */
  blockNumber: bigint | null;
  blockTime: Date | null;
}

/** An input of a transaction: the outpoint it spends, and the spending transaction. */
export interface OutpointSpend {
  txid: string;
  vout: number;
  spender: string;
  /** null while the spending transaction is only in the mempool. */
  blockNumber: bigint | null;
}

/** A watched output a spend was recorded on. */
export interface SpentUtxo {
  txid: string;
  vout: number;
  address: string;
  spender: string;
}

export interface UtxoRecord {
  txid: string;
  vout: number;
  script: string;
  address: string;
  value: bigint;
  blockNumber: bigint | null;
  /** Postgres text (UTC) or null. */
  blockTime: string | null;
  spentTxid: string | null;
  spentBlockNumber: bigint | null;
}

const json = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * Records outputs (insert or update). A mined output gets its block; recording it again from the
 * mempool (a stale mempool snapshot) never takes the block away. Idempotent.
 */
export async function recordUtxos(db: Db, chain: string, utxos: readonly NewUtxo[]): Promise<void> {
  if (utxos.length === 0) return;
  const rows = utxos.map((u) => ({
    txid: u.txid,
    vout: u.vout,
    script: u.script,
    address: u.address,
    value: u.value,
    block_number: u.blockNumber,
    block_time: u.blockTime?.toISOString() ?? null,
  }));
  await sql`
    insert into bitcoin_utxos (chain, txid, vout, script, address, value, block_number, block_time)
    select ${chain}, r.txid, r.vout, r.script, r.address, r.value::numeric, r.block_number, r.block_time
    from jsonb_to_recordset(${json(rows)}::jsonb)
      as r(txid text, vout int, script text, address text, value text, block_number bigint, block_time timestamptz)
    on conflict (chain, txid, vout) do update set
      block_number = coalesce(excluded.block_number, bitcoin_utxos.block_number),
      block_time = coalesce(excluded.block_time, bitcoin_utxos.block_time)
  `.execute(db);
}

/**
 * Marks the watched outputs among `spends` (every input of a block, or of new mempool transactions)
 * as spent, and returns them: the primary key is the outpoint index, so one statement matches a
 * whole block's inputs. A spend seen in the mempool never replaces one already mined.
 */
export async function recordSpends(db: Db, chain: string, spends: readonly OutpointSpend[]): Promise<SpentUtxo[]> {
  if (spends.length === 0) return [];
  const rows = spends.map((s) => ({ txid: s.txid, vout: s.vout, spender: s.spender, block: s.blockNumber }));
  const { rows: spent } = await sql<SpentUtxo>`
    update bitcoin_utxos u set spent_txid = s.spender, spent_block_number = s.block
    from jsonb_to_recordset(${json(rows)}::jsonb) as s(txid text, vout int, spender text, block bigint)
    where u.chain = ${chain} and u.txid = s.txid and u.vout = s.vout
      and (s.block is not null or u.spent_block_number is null)
    returning u.txid, u.vout, u.address, u.spent_txid as spender
  `.execute(db);
  return spent;
}

/**
 * Undoes what blocks above `ancestor` recorded (a reorg removed them): their outputs are deleted and
 * the spends made in them cleared. A transaction back in the mempool is recorded again from there.
 * Returns the addresses whose outputs changed.
 */
export async function undoUtxosAbove(db: Db, chain: string, ancestor: bigint): Promise<string[]> {
  const above = ancestor.toString();
  const { rows: deleted } = await sql<{ address: string }>`
    delete from bitcoin_utxos where chain = ${chain} and block_number is not null and block_number > ${above}
    returning address
  `.execute(db);
  const { rows: unspent } = await sql<{ address: string }>`
    update bitcoin_utxos set spent_txid = null, spent_block_number = null
    where chain = ${chain} and spent_block_number is not null and spent_block_number > ${above}
    returning address
  `.execute(db);
  return [...new Set([...deleted, ...unspent].map((r) => r.address))];
}

/**
 * Forgets unmined transactions that left the mempool (replaced, conflicted, expired): their outputs
 * are deleted, their spends cleared, and the redeems and refunds they showed on swaps (block 0)
 * cleared. Mined records are never touched. Returns the addresses whose outputs changed and the
 * number of swap rows changed.
 */
export async function dropUnconfirmed(db: Db, chain: string, txids: readonly string[]): Promise<{ addresses: string[]; changed: number }> {
  if (txids.length === 0) return { addresses: [], changed: 0 };
  const list = json(txids);
  const { rows: deleted } = await sql<{ address: string }>`
    delete from bitcoin_utxos
    where chain = ${chain} and block_number is null and txid in (select jsonb_array_elements_text(${list}::jsonb))
    returning address
  `.execute(db);
  const { rows: unspent } = await sql<{ address: string }>`
    update bitcoin_utxos set spent_txid = null
    where chain = ${chain} and spent_block_number is null and spent_txid in (select jsonb_array_elements_text(${list}::jsonb))
    returning address
  `.execute(db);
  const redeems = await sql<{ order_id: string }>`
    update swaps set redeem_tx_hash = '', redeem_block_number = 0, redeem_timestamp = null, secret = ''
    where chain = ${chain} and redeem_block_number = 0 and redeem_tx_hash in (select jsonb_array_elements_text(${list}::jsonb))
    returning order_id
  `.execute(db);
  const refunds = await sql<{ order_id: string }>`
    update swaps set refund_tx_hash = '', refund_block_number = 0, refund_timestamp = null
    where chain = ${chain} and refund_block_number = 0 and refund_tx_hash in (select jsonb_array_elements_text(${list}::jsonb))
    returning order_id
  `.execute(db);
  return {
    addresses: [...new Set([...deleted, ...unspent].map((r) => r.address))],
    changed: redeems.rows.length + refunds.rows.length,
  };
}

/** Of `swapIds`, those whose redeem (or refund) is already mined: a mempool spend must not replace it. */
export async function swapsWithMinedSpend(db: Db, chain: string, kind: 'redeemed' | 'refunded', swapIds: readonly string[]): Promise<Set<string>> {
  if (swapIds.length === 0) return new Set();
  const column = sql.ref(kind === 'redeemed' ? 'redeem_block_number' : 'refund_block_number');
  const { rows } = await sql<{ swap_id: string }>`
    select swap_id from swaps
    where chain = ${chain} and ${column} <> 0 and swap_id in (select jsonb_array_elements_text(${json(swapIds)}::jsonb))
  `.execute(db);
  return new Set(rows.map((r) => r.swap_id));
}

/**
 * Derives the initiate fields of the swaps whose HTLC address is among `addresses` from their
 * outputs (mempool and mined), as Garden's Bitcoin swaps show several funding transactions:
 * - `filled_amount`: the sum of every output paid to the HTLC, mempool included, spent or not.
 * - `initiate_tx_hash`: empty while that sum is below the swap's amount, so an underfunded HTLC never
 *   looks initiated (status, solver and order list all read the hash). From then on, the funding
 *   txids comma-separated (one txid when one transaction funds it), mined ones first by block.
 * - `initiate_block_number`: the first block at which the MINED outputs add up to the amount; the
 *   confirmations count from there, so every output needed for the amount has at least that many.
 *   0 while the amount is only reached with mempool outputs (initiate detected).
 * - `initiate_timestamp`: that block's time.
 * Returns how many swap rows changed (a swap already showing these values is not written).
 */
export async function refreshSwapFunding(db: Db, chain: string, addresses: readonly string[]): Promise<number> {
  if (addresses.length === 0) return 0;
  const result = await sql<{ order_id: string }>`
    with touched as (
      select distinct a as address from jsonb_array_elements_text(${json(addresses)}::jsonb) as a
    ),
    txs as (
      select u.address, u.txid, min(u.block_number) as block, min(u.block_time) as time, sum(u.value) as value
      from bitcoin_utxos u join touched t on t.address = u.address
      where u.chain = ${chain}
      group by u.address, u.txid
    ),
    totals as (
      select address, sum(value) as filled, string_agg(txid, ',' order by block nulls last, txid) as hashes
      from txs group by address
    ),
    running as (
      select address, block, time, sum(value) over (partition by address order by block) as total
      from txs where block is not null
    ),
    derived as (
      select s.order_id, s.side, coalesce(t.filled, 0) as filled,
        case when t.filled >= s.amount then t.hashes else '' end as tx_hash,
        coalesce(r.block, 0) as block, r.time
      from swaps s
      join touched on touched.address = s.swap_id
      left join totals t on t.address = s.swap_id
      left join lateral (
        select block, time from running where running.address = s.swap_id and running.total >= s.amount
        order by block limit 1
      ) r on true
      where s.chain = ${chain}
    )
    update swaps s set
      filled_amount = d.filled, initiate_tx_hash = d.tx_hash, initiate_block_number = d.block, initiate_timestamp = d.time,
      current_confirmations = case when s.initiate_block_number = d.block then s.current_confirmations else 0 end
    from derived d
    where s.order_id = d.order_id and s.side = d.side
      and (s.filled_amount, s.initiate_tx_hash, s.initiate_block_number, s.initiate_timestamp)
        is distinct from (d.filled, d.tx_hash, d.block, d.time)
    returning s.order_id
  `.execute(db);
  return result.rows.length;
}

/** The transactions of `chain` recorded from the mempool and not mined since: outputs and spends. */
export async function unconfirmedTxids(db: Db, chain: string): Promise<string[]> {
  const { rows } = await sql<{ txid: string }>`
    select txid from bitcoin_utxos where chain = ${chain} and block_number is null
    union
    select spent_txid from bitcoin_utxos where chain = ${chain} and spent_txid is not null and spent_block_number is null
  `.execute(db);
  return rows.map((r) => r.txid);
}

interface UtxoRow {
  txid: string;
  vout: number;
  script: string;
  address: string;
  value: string;
  block_number: string | null;
  block_time: string | null;
  spent_txid: string | null;
  spent_block_number: string | null;
}

const big = (v: string | null) => (v === null ? null : BigInt(v));

/**
 * The outputs recorded for `address` on `chain` (an HTLC's, to spend it; the wallet's, to read its
 * coins), oldest first. `unspent`: only those no transaction spends, mempool included.
 */
export async function utxosOf(db: Db, chain: string, address: string, options: { unspent?: boolean } = {}): Promise<UtxoRecord[]> {
  const { rows } = await sql<UtxoRow>`
    select txid, vout, script, address, value, block_number, block_time, spent_txid, spent_block_number
    from bitcoin_utxos
    where chain = ${chain} and address = ${address} ${options.unspent ? sql`and spent_txid is null` : sql``}
    order by block_number nulls last, txid, vout
  `.execute(db);
  return rows.map((r) => ({
    txid: r.txid,
    vout: r.vout,
    script: r.script,
    address: r.address,
    value: BigInt(r.value),
    blockNumber: big(r.block_number),
    blockTime: r.block_time,
    spentTxid: r.spent_txid,
    spentBlockNumber: big(r.spent_block_number),
  }));
}

/** Which of `addresses` have any output recorded. */
export async function addressesWithOutputs(db: Db, chain: string, addresses: readonly string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db.selectFrom('bitcoin_utxos').select('address').distinct().where('chain', '=', chain).where('address', 'in', addresses).execute();
  return new Set(rows.map((r) => r.address));
}

/** The sum of an address's recorded outputs that are mined and unspent (a wallet's confirmed balance). */
export async function confirmedBalance(db: Db, chain: string, address: string): Promise<bigint> {
  const { rows } = await sql<{ total: string | null }>`
    select sum(value)::text as total from bitcoin_utxos
    where chain = ${chain} and address = ${address} and block_number is not null and spent_txid is null
  `.execute(db);
  return BigInt(rows[0]?.total ?? '0');
}

/** How the recorded outputs among `outpoints` are spent: by which transaction, and in which block (null: mempool). */
export async function spendsOf(
  db: Db,
  chain: string,
  outpoints: ReadonlyArray<{ txid: string; vout: number }>,
): Promise<Array<{ spentTxid: string | null; spentBlockNumber: bigint | null }>> {
  const { rows } = await sql<{ spent_txid: string | null; spent_block_number: string | null }>`
    select u.spent_txid, u.spent_block_number
    from bitcoin_utxos u
    join jsonb_to_recordset(${JSON.stringify(outpoints)}::jsonb) as i(txid text, vout int) on u.txid = i.txid and u.vout = i.vout
    where u.chain = ${chain}
  `.execute(db);
  return rows.map((r) => ({ spentTxid: r.spent_txid, spentBlockNumber: big(r.spent_block_number) }));
}
