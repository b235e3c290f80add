// The Solana watcher's cost per slot with 100, 1,000 and 10,000 open swaps, against the local chain
// (LiteSVM behind JSON-RPC, the project's HTLC programs). Each open swap is a real SOL swap account:
// an order in the database whose source swap is initiated on chain by a signed `initiate` of the
// native program, sent over the RPC 500 to a slot in one JSON-RPC batch (skipPreflight), each slot
// then read by the watcher (setup, timed apart). The clock is stopped (slotMs 0) and moved one slot
// at a time; each measured slot holds one new initiate and one redeem of an open swap. Per slot: the
// poll's wall time, the HTTP requests it makes to the RPC and the SQL statements it runs (BEGIN and
// COMMIT not counted).
// Run alone: node --import tsx bench/solana-watcher.ts
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { getAddressEncoder, type Address, type KeyPairSigner } from '@solana/kit';
import { sql } from 'kysely';
import { nativeInitiateInstruction, nativeRedeemInstruction } from '../src/chains/solana/instructions.ts';
import { startSolanaLocalnet } from '../src/localnet/solana/chain/index.ts';
import { findProgramAddressSync } from '../src/chains/solana/pda.ts';
import { swapAccountSeeds } from '../src/chains/solana/program.ts';
import { LOCALNET_PROGRAM_IDS } from '../src/localnet/solana/programs/deploy.ts';
import { SolanaWatcher } from '../src/chains/solana/watcher.ts';
import { migrate, openStore, type Db, type StoreKind } from '../src/store/database.ts';
import { localnetRegistry, seedBasics, SOLVER } from '../test/helpers/fixtures.ts';
import { solanaProgramsForSuite } from '../test/helpers/solana.ts';
import { fundedSigner, localnetRpc, rawRpc, sendWire, signedTransaction, type SolanaRpc } from '../test/helpers/solana-localnet.ts';
import { createDatabase, StatementCounter } from '../test/helpers/stores.ts';
import type { Row } from './stats.ts';

const CHAIN = 'solana_localnet';
const SIZES = [100, 1_000, 10_000];
const SLOTS = Number(process.env.BENCH_SOL_SLOTS ?? 20);
/** Setup initiates per slot, sent as one JSON-RPC batch. */
const PER_SLOT = 500;
const AMOUNT = 1_000_000n;
const EXPIRES_IN_SLOTS = 1_000_000n;

/** One swap: its secret, and its swap account's id as the watcher records it (hex of the PDA). */
interface Swap {
  initiator: KeyPairSigner;
  secret: Buffer;
  secretHash: Buffer;
  swapId: string;
}

const program = LOCALNET_PROGRAM_IDS.native_swaps;

function newSwaps(count: number, initiators: readonly KeyPairSigner[]): Swap[] {
  return Array.from({ length: count }, (_, i) => {
    const initiator = initiators[i % initiators.length]!;
    const secret = randomBytes(32);
    const secretHash = createHash('sha256').update(secret).digest();
    const [pda] = findProgramAddressSync(program, swapAccountSeeds('native', initiator.address, secretHash));
    return { initiator, secret, secretHash, swapId: Buffer.from(getAddressEncoder().encode(pda)).toString('hex') };
  });
}

/** Orders whose source is each swap's SOL swap account (destination on ethereum_localnet): two statements. */
async function insertSolanaOrders(db: Db, appId: string, swaps: readonly Swap[], redeemer: Address): Promise<void> {
  const rows = JSON.stringify(swaps.map((s) => ({ id: s.swapId, secret_hash: s.secretHash.toString('hex'), initiator: s.initiator.address })));
  await sql`
    insert into orders (id, app_id, nonce, solver_id, integrator, version, slippage, secret_hash, deadline)
    select r.id, ${appId}, r.id, ${SOLVER.id}, 'bench', 'v2', 50, r.secret_hash, ${Math.floor(Date.now() / 1000) + 6 * 3600}
    from jsonb_to_recordset(${rows}::jsonb) as r(id text, secret_hash text, initiator text)
  `.execute(db);
  await sql`
    insert into swaps (order_id, side, swap_id, chain, asset, initiator, redeemer, delegate, timelock, amount, required_confirmations, secret_hash, created_at)
    select r.id, s.side, case when s.side = 'source' then r.id else encode(sha256(convert_to('dst' || r.id, 'UTF8')), 'hex') end,
      case when s.side = 'source' then ${CHAIN} else 'ethereum_localnet' end,
      case when s.side = 'source' then ${`${CHAIN}:sol`} else 'ethereum_localnet:wbtc' end,
      r.initiator, ${redeemer}, '', ${EXPIRES_IN_SLOTS.toString()}::bigint, ${AMOUNT.toString()}::numeric, 1, r.secret_hash, now() - interval '1 hour'
    from jsonb_to_recordset(${rows}::jsonb) as r(id text, secret_hash text, initiator text)
    cross join (values ('source'), ('destination')) as s(side)
  `.execute(db);
}

async function initiateWire(rpc: SolanaRpc, swap: Swap, redeemer: Address, blockhash: string) {
  const instruction = await nativeInitiateInstruction({
    program,
    initiator: swap.initiator.address,
    args: { amount: AMOUNT, expiresInSlots: EXPIRES_IN_SLOTS, redeemer, secretHash: Uint8Array.from(swap.secretHash) },
  });
  return (await signedTransaction(rpc, swap.initiator, [instruction], blockhash)).wire;
}

async function redeemWire(rpc: SolanaRpc, swap: Swap, redeemer: KeyPairSigner, blockhash: string) {
  const instruction = await nativeRedeemInstruction({
    program,
    initiator: swap.initiator.address,
    secretHash: Uint8Array.from(swap.secretHash),
    redeemer: redeemer.address,
    secret: Uint8Array.from(swap.secret),
  });
  return (await signedTransaction(rpc, redeemer, [instruction], blockhash)).wire;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Runs the Solana watcher bench; returns the table rows. */
export async function benchSolanaWatcher(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite'): Promise<Row[]> {
  const built = await solanaProgramsForSuite();
  if (!built) throw new Error('clang-19 is missing: the Solana programs cannot be built');
  const chainNode = await startSolanaLocalnet({
    slotMs: 0,
    programs: [
      { programId: LOCALNET_PROGRAM_IDS.native_swaps, elf: built.native_swaps },
      { programId: LOCALNET_PROGRAM_IDS.spl_swaps, elf: built.spl_swaps },
    ],
  });
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench') : undefined;
  const store = await openStore(database ? { databaseUrl: database.url } : { dataDir: 'memory://' });
  // The watcher's HTTP requests to the RPC, counted where kit sends them. The chain's server runs in
  // this process: when PGlite (in process too) has held the event loop past the server's keep-alive
  // timeout, a pooled socket can be closed just as it is reused; such a request is sent once more.
  let requests = 0;
  let resent = 0;
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    if (!String(input instanceof Request ? input.url : input).startsWith(chainNode.rpcUrl)) return realFetch(input, init);
    requests++;
    try {
      return await realFetch(input, init);
    } catch (err) {
      if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
      resent++;
      return realFetch(input, init);
    }
  };
  try {
    await migrate(store.db);
    const registry = localnetRegistry();
    const chain = registry.chain(CHAIN)!;
    const { app } = await seedBasics(store.db, registry);
    const rpc = localnetRpc(chainNode.rpcUrl);
    const initiators = await Promise.all(Array.from({ length: 8 }, () => fundedSigner(rpc, 20_000n)));
    const redeemer = await fundedSigner(rpc, 100n);
    const statements = new StatementCounter();
    const db = store.db.withPlugin(statements);
    const blockhash = async () => (await rpc.getLatestBlockhash({ commitment: 'processed' }).send()).value.blockhash;
    chainNode.advanceSlots(2);
    const watcher = new SolanaWatcher(db, chain, chainNode.rpcUrl, { startSlot: BigInt(chainNode.slot()) - 1n });
    await watcher.poll();
    const open: Swap[] = [];
    const rows: Row[] = [];

    for (const size of SIZES) {
      // Setup: the orders, their swap accounts initiated on chain, and the watcher's reading of them.
      let started = performance.now();
      const added = newSwaps(size - open.length, initiators);
      await insertSolanaOrders(store.db, app.id, added, redeemer.address);
      const setupDbMs = performance.now() - started;
      started = performance.now();
      // The watcher reads each setup slot as it is confirmed, as it would keep up with a live chain
      // (one poll over all 9,000 at once sends 9,000 getTransaction requests together, which can end
      // in connect timeouts: the watcher does not bound its concurrent reads).
      let [caughtUp, catchUpMs] = [0, 0];
      const readSetup = async () => {
        const at = performance.now();
        for (let r; (r = await watcher.poll()), r.from <= r.to; ) caughtUp += r.events.length;
        catchUpMs += performance.now() - at;
      };
      for (let at = 0; at < added.length; at += PER_SLOT) {
        const hash = await blockhash();
        const batch = added.slice(at, at + PER_SLOT);
        const wires = await Promise.all(batch.map((s) => initiateWire(rpc, s, redeemer.address, hash)));
        const answers = (await rawRpc(
          chainNode.rpcUrl,
          wires.map((wire, id) => ({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [wire, { encoding: 'base64', skipPreflight: true }] })),
        )) as Array<{ error?: { message: string } }>;
        const failed = answers.find((a) => a.error);
        if (failed) throw new Error(`a setup initiate was refused: ${failed.error!.message}`);
        chainNode.advanceSlots(1);
        await readSetup();
      }
      chainNode.advanceSlots(1);
      await readSetup();
      const setupChainMs = performance.now() - started - catchUpMs;
      if (caughtUp !== added.length) throw new Error(`the watcher read ${caughtUp} initiates, expected ${added.length}`);
      open.push(...added);
      const openNow = await store.db
        .selectFrom('swaps')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('chain', '=', CHAIN)
        .where('initiate_block_number', '<>', '0')
        .where('redeem_block_number', '=', '0')
        .executeTakeFirstOrThrow();

      // Measured slots: one new initiate (its order stored first) and one redeem of an open swap each.
      const measure = { ms: [] as number[], rpc: [] as number[], sql: [] as number[] };
      const fresh = newSwaps(SLOTS, initiators);
      await insertSolanaOrders(store.db, app.id, fresh, redeemer.address);
      for (let s = 0; s < SLOTS; s++) {
        const hash = await blockhash();
        const redeemed = open.splice(Math.floor(Math.random() * open.length), 1)[0]!;
        await sendWire(rpc, await initiateWire(rpc, fresh[s]!, redeemer.address, hash), true);
        await sendWire(rpc, await redeemWire(rpc, redeemed, redeemer, hash), true);
        open.push(fresh[s]!);
        chainNode.advanceSlots(1);
        [requests, statements.count, started] = [0, 0, performance.now()];
        const seen = await watcher.poll();
        measure.ms.push(performance.now() - started);
        measure.rpc.push(requests);
        measure.sql.push(statements.count);
        const kinds = seen.events.map((e) => e.kind).sort().join(',');
        if (kinds !== 'initiated,redeemed' || seen.to !== seen.from) throw new Error(`slot poll ${seen.from}..${seen.to} saw [${kinds}], expected one initiate and one redeem`);
      }
      const ms = (x: number) => x.toFixed(1);
      rows.push({
        'open swaps': Number(openNow.n),
        'setup: orders ms': ms(setupDbMs),
        'setup: initiates s': (setupChainMs / 1000).toFixed(1),
        'setup: watcher reading it s': (catchUpMs / 1000).toFixed(1),
        'slot poll ms (median)': ms(median(measure.ms)),
        'slot poll ms (max)': ms(Math.max(...measure.ms)),
        'RPC requests/slot': mean(measure.rpc),
        'SQL statements/slot': mean(measure.sql),
        note: `${kind}; ${resent} requests resent after ECONNRESET so far; ${SLOTS} slots of 1 initiate + 1 redeem; setup ${PER_SLOT} initiates a slot`,
      });
    }
    return rows;
  } finally {
    globalThis.fetch = realFetch;
    await store.close();
    await database?.drop();
    await chainNode.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kinds: StoreKind[] = process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
  for (const kind of kinds) console.table(await benchSolanaWatcher(kind));
}
