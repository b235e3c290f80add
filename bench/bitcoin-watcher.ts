// The Bitcoin-family watcher's cost per block with 100, 1,000 and 10,000 indexed HTLCs, against a real
// Litecoin Core regtest node. Orders with a Litecoin source are inserted in bulk (one statement per
// table); each measured block holds a few transactions, one of them funding an indexed HTLC. Per
// block: the poll's wall time, the RPC calls it makes and the SQL statements it runs (BEGIN and
// COMMIT not counted). The mempool poll (funding seen before its block) is measured the same way.
import { randomBytes } from 'node:crypto';
import { Address } from '@scure/btc-signer';
import { sql } from 'kysely';
import { isXOnlyPublicKey } from '../src/chains/bitcoin/address.ts';
import { bitcoinNetwork } from '../src/chains/bitcoin/network.ts';
import { BitcoinWatcher, type BitcoinRpcClient } from '../src/chains/bitcoin/watcher.ts';
import { startLitecoind } from '../src/localnet/bitcoin/litecoind.ts';
import { migrate, openStore, type Db, type StoreKind } from '../src/store/database.ts';
import { localnetRegistry, seedBasics, SOLVER } from '../test/helpers/fixtures.ts';
import { createDatabase, StatementCounter } from '../test/helpers/stores.ts';

const CHAIN = 'litecoin_localnet';
const SIZES = [100, 1_000, 10_000];
const BLOCKS = Number(process.env.BENCH_BTC_BLOCKS ?? 20);
/** Transactions per measured block besides the HTLC funding. */
const OTHER_TXS = 3;
const AMOUNT = 100_000n;

/** Taproot addresses of random output keys (random x coordinates on the curve): distinct HTLC-like scripts, cheaply. */
function randomTaprootAddresses(count: number): string[] {
  const coder = Address(bitcoinNetwork('litecoin_regtest'));
  const addresses: string[] = [];
  while (addresses.length < count) {
    const key = randomBytes(32);
    if (isXOnlyPublicKey(key.toString('hex'))) addresses.push(coder.encode({ type: 'tr', pubkey: key }));
  }
  return addresses;
}

/**
 * Inserts `addresses.length` orders whose source swap is a Litecoin HTLC at those addresses: one
 * statement per table. The swaps are dated an hour back, as open HTLCs accumulate over hours; the
 * watcher's refresh looks again only at the swaps of the last minute.
 */
async function insertOrders(db: Db, appId: string, addresses: readonly string[]): Promise<void> {
  const salt = randomBytes(8).toString('hex');
  const deadline = Math.floor(Date.now() / 1000) + 6 * 3600;
  await sql`
    insert into orders (id, app_id, nonce, solver_id, integrator, version, slippage, secret_hash, deadline)
    select encode(sha256(convert_to('order' || ${salt} || a.i, 'UTF8')), 'hex'), ${appId}, ${salt} || a.i, ${SOLVER.id},
      'bench', 'v2', 50, encode(sha256(convert_to('secret' || ${salt} || a.i, 'UTF8')), 'hex'), ${deadline}
    from jsonb_array_elements_text(${JSON.stringify(addresses)}::jsonb) with ordinality as a(address, i)
  `.execute(db);
  await sql`
    insert into swaps (order_id, side, swap_id, chain, asset, initiator, redeemer, delegate, timelock, amount, required_confirmations, secret_hash, created_at)
    select o.id, s.side, case when s.side = 'source' then a.address else encode(sha256(convert_to('dst' || o.id, 'UTF8')), 'hex') end,
      case when s.side = 'source' then ${CHAIN} else 'ethereum_localnet' end,
      case when s.side = 'source' then ${`${CHAIN}:ltc`} else 'ethereum_localnet:wbtc' end,
      'user', 'solver', '', 60, ${AMOUNT.toString()}::numeric, 1, o.secret_hash, now() - interval '1 hour'
    from jsonb_array_elements_text(${JSON.stringify(addresses)}::jsonb) with ordinality as a(address, i)
    join orders o on o.id = encode(sha256(convert_to('order' || ${salt} || a.i, 'UTF8')), 'hex')
    cross join (values ('source'), ('destination')) as s(side)
  `.execute(db);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const coins = (sats: bigint) => `${sats / 100_000_000n}.${(sats % 100_000_000n).toString().padStart(8, '0')}`;

/** Runs the Bitcoin watcher bench; returns the table rows. */
export async function benchBitcoinWatcher(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite'): Promise<Array<Record<string, string | number>>> {
  const node = await startLitecoind();
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench') : undefined;
  const store = await openStore(database ? { databaseUrl: database.url } : { dataDir: 'memory://' });
  try {
    await migrate(store.db);
    const registry = localnetRegistry();
    const chain = registry.chain(CHAIN)!;
    const { app } = await seedBasics(store.db, registry);
    let rpcCalls = 0;
    const rpc: BitcoinRpcClient = {
      call: <T>(method: string, params?: unknown[]) => {
        rpcCalls++;
        return node.rpc.call<T>(method, params);
      },
    };
    const statements = new StatementCounter();
    const db = store.db.withPlugin(statements);
    const sink = await node.rpc.call<string>('getnewaddress', ['', 'bech32']);
    const startBlock = BigInt(await node.rpc.getBlockCount()) + 1n;
    const rows: Array<Record<string, string | number>> = [];
    const indexed: string[] = [];

    for (const size of SIZES) {
      const added = randomTaprootAddresses(size - indexed.length);
      await insertOrders(store.db, app.id, added);
      indexed.push(...added);
      // A watcher started now loads the index at its first poll (the cursor carries on).
      const watcher = new BitcoinWatcher(db, chain, rpc, { startBlock });
      let started = performance.now();
      await watcher.poll();
      const firstPollMs = performance.now() - started;

      const measure = { block: [] as number[], blockRpc: [] as number[], blockSql: [] as number[], mempool: [] as number[], mempoolRpc: [] as number[], mempoolSql: [] as number[] };
      for (let b = 0; b < BLOCKS; b++) {
        await node.rpc.call('sendtoaddress', [indexed[Math.floor(Math.random() * indexed.length)], coins(AMOUNT)]);
        for (let i = 0; i < OTHER_TXS; i++) await node.rpc.call('sendtoaddress', [sink, '0.001']);
        [rpcCalls, statements.count, started] = [0, 0, performance.now()];
        const seen = await watcher.poll();
        measure.mempool.push(performance.now() - started);
        measure.mempoolRpc.push(rpcCalls);
        measure.mempoolSql.push(statements.count);
        if (seen.received.length !== 1) throw new Error(`the mempool poll found ${seen.received.length} HTLC outputs, expected 1`);

        await node.mine(1);
        [rpcCalls, statements.count, started] = [0, 0, performance.now()];
        const mined = await watcher.poll();
        measure.block.push(performance.now() - started);
        measure.blockRpc.push(rpcCalls);
        measure.blockSql.push(statements.count);
        if (mined.to - mined.from !== 0n || mined.received.length !== 1) throw new Error('the block poll did not read exactly one block with one HTLC output');
      }
      const ms = (x: number) => x.toFixed(1);
      rows.push({
        'indexed HTLCs': watcher.watchedScripts,
        'first poll ms (index load)': ms(firstPollMs),
        'block poll ms (median)': ms(median(measure.block)),
        'block poll ms (max)': ms(Math.max(...measure.block)),
        'RPC calls/block': mean(measure.blockRpc),
        'SQL statements/block': mean(measure.blockSql),
        'mempool poll ms (median)': ms(median(measure.mempool)),
        'RPC calls/mempool poll': mean(measure.mempoolRpc),
        'SQL statements/mempool poll': mean(measure.mempoolSql),
        note: `${kind}; ${BLOCKS} blocks of ${OTHER_TXS + 2} transactions`,
      });
    }
    return rows;
  } finally {
    await store.close();
    await database?.drop();
    await node.stop();
  }
}
