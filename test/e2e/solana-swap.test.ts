// Solana swaps end to end over HTTP against `hashlock dev`'s wiring (in process, PGlite): the local
// Solana chain (LiteSVM behind JSON-RPC, a slot every 400 ms) with the project's HTLC programs
// deployed through the Upgradeable Loader, the two anvil chains, and the service's own watchers,
// senders and solver. Every balance is checked, fees named.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  compileTransaction,
  createSolanaRpc,
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address as EvmAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { solanaSignerOfKey } from '../../src/chains/solana/keys.ts';
import { findProgramAddress } from '../../src/chains/solana/pda.ts';
import { IDENTITY_PDA_SEEDS, tokenVaultSeeds } from '../../src/chains/solana/program.ts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { instantRefundSigned } from '../helpers/order-flags.ts';
import { solverPassesFrom, until } from '../helpers/wait.ts';

const LAMPORTS_PER_SIGNATURE = 5_000n;
const evmUser = privateKeyToAccount(privateKeyOf(devAccount('user')));

let dev: Dev | undefined;
let sol: KeyPairSigner;
let solver: KeyPairSigner;
let relayer: KeyPairSigner;
let rpc: ReturnType<typeof createSolanaRpc>;
let arb: ReturnType<typeof createPublicClient>;
let advance: (slots: number) => void;
/** Stops the slot clock until the returned function is called: no slot is confirmed between a send and a jump of `advance`. */
let hold: () => () => void;

before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-solana-swap-'));
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, databaseUrl: undefined, logLevel: 'warn' };
  dev = await startDev(config);
  const solana = dev.chains.find((c) => c.chain.key === 'solana_localnet');
  assert.ok(solana, 'the devnet runs solana_localnet');
  advance = (slots) => void solana.advance!(slots);
  hold = () => solana.hold!();
  rpc = createSolanaRpc(String(solana.access.rpc_url));
  const arbitrum = dev.chains.find((c) => c.chain.key === 'arbitrum_localnet')!;
  arb = createPublicClient({ transport: http(String(arbitrum.access.rpc_url)) });
  [sol, solver, relayer] = await Promise.all([
    solanaSignerOfKey(privateKeyOf(devAccount('user'))),
    solanaSignerOfKey(privateKeyOf(devAccount('solver'))),
    solanaSignerOfKey(privateKeyOf(devAccount('relayer'))),
  ]);
});

after(async () => {
  await dev?.stop();
});


async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: { status: string; result: T; error?: string } }> {
  const res = await fetch(`${dev!.apiUrl}${path}`, {
    method,
    headers: { 'service-app-id': dev!.appKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { status: string; result: T; error?: string } };
}

interface Swap {
  swap_id: string;
  initiate_tx_hash: string;
  redeem_tx_hash: string;
  refund_tx_hash: string;
  filled_amount: string;
  secret: string;
}
interface Order {
  order_id: string;
  status: string;
  source_swap: Swap;
  destination_swap: Swap;
}

const readOrder = async (id: string) => (await api<Order>('GET', `/v2/orders/${id}`)).body.result;
const orderReaches = (id: string, statuses: readonly string[], timeoutMs?: number) =>
  until(`order ${id} to reach ${statuses.join(' or ')}`, async () => {
    const o = await readOrder(id);
    return statuses.includes(o.status) ? o : undefined;
  }, timeoutMs ?? 60_000, 200);

async function quote(from: string, to: string, amount: bigint) {
  const q = await api<Array<{ solver_id: string; destination: { amount: string } }>>('GET', `/v2/quote?from=${from}&to=${to}&from_amount=${amount}`);
  assert.equal(q.status, 200, JSON.stringify(q.body));
  return q.body.result[0]!;
}

async function createOrder(from: string, to: string, amount: bigint, owners: { from: string; to: string }, secretHash?: string) {
  const best = await quote(from, to, amount);
  const res = await api<Record<string, any>>('POST', '/v2/orders', {
    source: { asset: from, owner: owners.from, amount: amount.toString() },
    destination: { asset: to, owner: owners.to, amount: best.destination.amount },
    solver_id: best.solver_id,
    ...(secretHash ? { secret_hash: secretHash } : {}),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { created: res.body.result, receive: BigInt(best.destination.amount) };
}

/** The user signs a base64 transaction of the API (its slot among the signers) and returns it. */
async function signAsUser(base64: string) {
  return partiallySignTransaction([sol.keyPair], getTransactionDecoder().decode(Buffer.from(base64, 'base64')));
}

async function sendAndWait(transaction: Awaited<ReturnType<typeof signAsUser>>): Promise<Signature> {
  await rpc.sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }).send();
  const signature = getSignatureFromTransaction(transaction);
  await until('the transaction to be confirmed', async () => {
    const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
    assert.equal(status?.err ?? null, null, `transaction failed: ${JSON.stringify(status?.err, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
    return status && status.confirmationStatus !== 'processed' ? true : undefined;
  }, 60_000, 200);
  return signature;
}

const lamportsOf = async (who: Address) => (await rpc.getBalance(who, { commitment: 'confirmed' }).send()).value;
async function tokensOf(who: Address, mint: Address): Promise<bigint> {
  const [ata] = await findAssociatedTokenPda({ owner: who, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { value } = await rpc.getAccountInfo(ata, { encoding: 'base64', commitment: 'confirmed' }).send();
  return value ? Buffer.from(value.data[0], 'base64').readBigUInt64LE(64) : 0n;
}
const asset = (id: string) => dev!.service.registry.asset(id)!;
const arbWbtc = () => asset('arbitrum_localnet:wbtc').token.address as EvmAddress;
const wbtcOf = (who: EvmAddress) => arb.readContract({ address: arbWbtc(), abi: erc20Abi, functionName: 'balanceOf', args: [who] });
const usdcMint = () => asset('solana_localnet:usdc').token.address as Address;

/** The EVM user approves the HTLC if asked, signs the order's typed data and PATCHes the gasless initiate. */
async function initiateGasless(created: Record<string, any>): Promise<void> {
  if (created.approval_transaction) {
    const wallet = createWalletClient({ account: evmUser, transport: http(String(dev!.chains.find((c) => c.chain.key === 'arbitrum_localnet')!.access.rpc_url)) });
    await arb.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: null, to: created.approval_transaction.to, data: created.approval_transaction.data }) });
  }
  const td = created.typed_data;
  const signature = await evmUser.signTypedData({
    domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
    types: { Initiate: td.types.Initiate },
    primaryType: 'Initiate',
    message: { ...td.message, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
  });
  const patched = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=initiate`, { signature });
  assert.equal(patched.status, 202, JSON.stringify(patched.body));
}

/** The fees the transactions paid, by signature, as the chain recorded them. */
async function feesOf(signatures: readonly string[]): Promise<bigint> {
  let total = 0n;
  for (const s of signatures) {
    const tx = await rpc.getTransaction(s as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    total += BigInt(tx!.meta!.fee);
  }
  return total;
}

test('SOL -> EVM, service-held secret: the user broadcasts versioned_tx, the service redeems its WBTC, the solver redeems the SOL', async () => {
  const amount = 1_000_000_000n;
  const before = { userSol: await lamportsOf(sol.address), solverSol: await lamportsOf(solver.address), userWbtc: await wbtcOf(evmUser.address) };
  const { created, receive } = await createOrder('solana_localnet:sol', 'arbitrum_localnet:wbtc', amount, { from: sol.address, to: evmUser.address });
  assert.equal(created.versioned_tx_gasless, null, 'native SOL has no gasless initiate');
  const initiate = await sendAndWait(await signAsUser(created.versioned_tx));
  const done = await orderReaches(created.order_id, ['completed']);
  assert.equal(done.source_swap.initiate_tx_hash, initiate);
  assert.equal(done.source_swap.filled_amount, amount.toString());
  assert.match(done.destination_swap.secret, /^[0-9a-f]{64}$/);
  // The user paid the amount and its one signature; the swap account's rent came back at the redeem.
  assert.equal(await lamportsOf(sol.address), before.userSol - amount - LAMPORTS_PER_SIGNATURE);
  assert.equal(await wbtcOf(evmUser.address), before.userWbtc + receive);
  // The solver got the amount and paid for its redeem transaction.
  const redeemFee = await feesOf([done.source_swap.redeem_tx_hash]);
  assert.equal(redeemFee, LAMPORTS_PER_SIGNATURE);
  assert.equal(await lamportsOf(solver.address), before.solverSol + amount - redeemFee);
});

test('EVM -> SOL, service-held secret: the gasless WBTC initiate, the solver funds SOL, the service redeems it to the user', async () => {
  const amount = 200_000n;
  const { created, receive } = await createOrder('arbitrum_localnet:wbtc', 'solana_localnet:sol', amount, { from: evmUser.address, to: sol.address });
  const before = { userSol: await lamportsOf(sol.address), solverSol: await lamportsOf(solver.address), userWbtc: await wbtcOf(evmUser.address) };
  await initiateGasless(created);
  const done = await orderReaches(created.order_id, ['completed']);
  assert.equal(await wbtcOf(evmUser.address), before.userWbtc - amount);
  // The user received exactly the destination amount and paid nothing on Solana.
  assert.equal(await lamportsOf(sol.address), before.userSol + receive);
  // The solver paid the amount and the fees of its initiate and of the redeem it sent for the user (the rent came back).
  const fees = await feesOf([done.destination_swap.initiate_tx_hash, done.destination_swap.redeem_tx_hash]);
  assert.equal(fees, 2n * LAMPORTS_PER_SIGNATURE);
  assert.equal(await lamportsOf(solver.address), before.solverSol - receive - fees);
});

test('USDC (SPL) gasless -> EVM: the user signs versioned_tx_gasless, the relayer pays every fee and the rent; ten identical PATCHes make one transaction', async () => {
  const amount = 25_000_000n;
  const program = asset('solana_localnet:usdc').htlc.address as Address;
  // The program's identity PDA and the mint's vault: the first swap's sponsor pays their rent, once.
  const [[identity], [vault]] = await Promise.all([findProgramAddress(program, IDENTITY_PDA_SEEDS), findProgramAddress(program, tokenVaultSeeds(usdcMint()))]);
  const programAccounts = async () => (await lamportsOf(identity)) + (await lamportsOf(vault));
  const before = {
    userSol: await lamportsOf(sol.address),
    relayerSol: await lamportsOf(relayer.address),
    userUsdc: await tokensOf(sol.address, usdcMint()),
    solverUsdc: await tokensOf(solver.address, usdcMint()),
    programAccounts: await programAccounts(),
  };
  const { created } = await createOrder('solana_localnet:usdc', 'arbitrum_localnet:wbtc', amount, { from: sol.address, to: evmUser.address });
  assert.ok(created.versioned_tx_gasless, 'a gasless app gets versioned_tx_gasless for an SPL source');
  const signed = getBase64EncodedWireTransaction((await signAsUser(created.versioned_tx_gasless)));
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api<string>('PATCH', `/v2/orders/${created.order_id}?action=initiate`, i % 2 ? { signature: signed } : { order_id: created.order_id, serialized_tx: signed })),
  );
  for (const a of answers) assert.equal(a.status, 202, JSON.stringify(a.body));
  const done = await orderReaches(created.order_id, ['completed']);
  const jobs = await dev!.service.store.db.selectFrom('relayer_jobs').select(['action', 'tx_hash']).where('order_id', '=', created.order_id).where('action', '=', 'initiate').execute();
  assert.equal(jobs.length, 1, 'one initiate job');
  assert.equal(done.source_swap.initiate_tx_hash, jobs[0]!.tx_hash);
  const sigs = await rpc.getSignaturesForAddress(sol.address, { limit: 20 }).send();
  assert.equal(sigs.filter((s) => s.signature === done.source_swap.initiate_tx_hash).length, 1, 'one initiate transaction on chain');
  assert.equal(await lamportsOf(sol.address), before.userSol, 'the user paid no SOL at all');
  assert.equal(await tokensOf(sol.address, usdcMint()), before.userUsdc - amount);
  assert.equal(await tokensOf(solver.address, usdcMint()), before.solverUsdc + amount);
  // The relayer paid the initiate's fee (and the program accounts' rent if this was the first swap);
  // the swap account's rent went back to it, the sponsor, at the redeem.
  const createdAccounts = (await programAccounts()) - before.programAccounts;
  assert.equal(await lamportsOf(relayer.address), before.relayerSol - (await feesOf([done.source_swap.initiate_tx_hash])) - createdAccounts);
});

test('EVM -> USDC with the secret the client keeps: the client redeems its Solana destination through PATCH ?action=redeem', async () => {
  const secret = randomBytes(32);
  const secretHash = createHash('sha256').update(secret).digest('hex');
  const amount = 100_000n;
  const { created, receive } = await createOrder('arbitrum_localnet:wbtc', 'solana_localnet:usdc', amount, { from: evmUser.address, to: sol.address }, secretHash);
  const beforeUsdc = await tokensOf(sol.address, usdcMint());
  const beforeSol = await lamportsOf(sol.address);
  await initiateGasless(created);
  await orderReaches(created.order_id, ['awaiting_redeem']);
  const wrong = await api('PATCH', `/v2/orders/${created.order_id}?action=redeem`, { secret: randomBytes(32).toString('hex') });
  assert.equal(wrong.status, 400);
  const redeem = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=redeem`, { secret: secret.toString('hex') });
  assert.equal(redeem.status, 202, JSON.stringify(redeem.body));
  const done = await orderReaches(created.order_id, ['completed']);
  assert.equal(done.destination_swap.secret, secret.toString('hex'));
  assert.equal(await tokensOf(sol.address, usdcMint()), beforeUsdc + receive);
  assert.equal(await lamportsOf(sol.address), beforeSol, 'the user paid nothing on Solana');
});

test('rule 2 and refund: a SOL source with too little time left is not funded; after expiry PATCH ?action=refund returns the SOL', async () => {
  const amount = 500_000_000n;
  const beforeSol = await lamportsOf(sol.address);
  const { created } = await createOrder('solana_localnet:sol', 'arbitrum_localnet:wbtc', amount, { from: sol.address, to: evmUser.address });
  const signed = await signAsUser(created.versioned_tx);
  // 1,300 of the source's 1,500 slots pass at once: 80 s left, less than the destination's 150 s plus
  // the margin. The clock is held meanwhile: the solver sees the initiate only once they have passed.
  const release = hold();
  try {
    await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
    advance(1_300);
  } finally {
    release();
  }
  await orderReaches(created.order_id, ['initiated']);
  const early = await api('PATCH', `/v2/orders/${created.order_id}?action=refund`);
  assert.equal(early.status, 409, JSON.stringify(early.body));
  assert.match(String(early.body.error), /has not expired: refundable after slot \d+/);
  await solverPassesFrom(dev!.apiUrl); // the solver has looked at the initiated order
  assert.equal((await readOrder(created.order_id)).destination_swap.initiate_tx_hash, '', 'the solver did not fund (rule 2)');
  advance(201);
  const refund = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=refund`);
  assert.equal(refund.status, 202, JSON.stringify(refund.body));
  const refunded = await orderReaches(created.order_id, ['refunded']);
  assert.ok(refunded.source_swap.refund_tx_hash);
  // The initiate's fee is the user's; the amount and the rent came back, the refund's fee was the relayer's.
  assert.equal(await lamportsOf(sol.address), beforeSol - LAMPORTS_PER_SIGNATURE);
});

test('instant refund of a USDC source: the solver signs as redeemer while the destination is unfunded, then never funds it', async () => {
  const amount = 30_000_000n;
  const beforeUsdc = await tokensOf(sol.address, usdcMint());
  const { created } = await createOrder('solana_localnet:usdc', 'arbitrum_localnet:wbtc', amount, { from: sol.address, to: evmUser.address });
  // The earlier tests moved the clock past the blockhash the API may still reuse: the client signs the
  // same initiate on a blockhash of its own, newer, which the relayer accepts.
  const { value: fresh } = await rpc.getLatestBlockhash().send();
  const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(getTransactionDecoder().decode(Buffer.from(created.versioned_tx_gasless, 'base64')).messageBytes));
  const renewed = compileTransaction(setTransactionMessageLifetimeUsingBlockhash(fresh, message));
  const signed = getBase64EncodedWireTransaction(await partiallySignTransaction([sol.keyPair], renewed));
  // Too little time left for the solver (rule 2): 1,300 slots pass at once after the relayer's send,
  // with the clock held meanwhile so that the slot it ran in is confirmed only after the jump.
  const release = hold();
  try {
    const initiate = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=initiate`, { signature: signed });
    assert.equal(initiate.status, 202);
    const sent = async () => {
      const job = await dev!.service.store.db.selectFrom('relayer_jobs').select('status').where('idempotency_key', '=', `${created.order_id}:initiate`).executeTakeFirst();
      return job?.status === 'submitted' || job?.status === 'confirmed' ? true : undefined;
    };
    await until('the relayer to send the initiate', sent, 30_000, 5);
    advance(1_300);
  } finally {
    release();
  }
  await orderReaches(created.order_id, ['initiated']);
  const res = await api<string>('PATCH', `/v3/orders/${created.order_id}?action=instant-refund`, {});
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const refunded = await orderReaches(created.order_id, ['refunded']);
  assert.ok(refunded.source_swap.refund_tx_hash);
  assert.equal(await tokensOf(sol.address, usdcMint()), beforeUsdc);
  assert.equal(await instantRefundSigned(dev!.service.store.db, created.order_id), true, 'rule 5: the solver never funds this destination');
});

test('rule 1: a swap account whose amount differs from the order is recorded but never funded', async () => {
  const amount = 300_000_000n;
  const { created } = await createOrder('solana_localnet:sol', 'arbitrum_localnet:wbtc', amount, { from: sol.address, to: evmUser.address });
  // The user builds its own initiate of the order's swap account with one lamport less.
  const { nativeInitiateInstruction } = await import('../../src/chains/solana/instructions.ts');
  const { unsignedV0Transaction } = await import('../../src/chains/solana/transactions.ts');
  const order = await readOrder(created.order_id);
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const instruction = await nativeInitiateInstruction({
    program: asset('solana_localnet:sol').htlc.address as Address,
    initiator: sol.address,
    args: {
      amount: amount - 1n,
      expiresInSlots: 1_500n,
      redeemer: solver.address,
      secretHash: Uint8Array.from(Buffer.from((await dev!.service.store.db.selectFrom('orders').select('secret_hash').where('id', '=', created.order_id).executeTakeFirstOrThrow()).secret_hash, 'hex')),
    },
  });
  await sendAndWait(await signAsUser(unsignedV0Transaction({ feePayer: sol.address, blockhash: lifetime.blockhash, instructions: [instruction] })));
  const seen = await until('the watcher to record the initiate', async () => {
    const o = await readOrder(created.order_id);
    return o.source_swap.initiate_tx_hash ? o : undefined;
  }, 60_000, 200);
  assert.equal(seen.source_swap.swap_id, order.source_swap.swap_id);
  assert.equal(seen.source_swap.filled_amount, (amount - 1n).toString());
  await solverPassesFrom(dev!.apiUrl); // the solver has looked at the recorded initiate
  assert.equal((await readOrder(created.order_id)).destination_swap.initiate_tx_hash, '', 'never funded');
});

test("the solver refunds its own expired SOL destination when the client never redeems", async () => {
  const secretHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  const { created, receive } = await createOrder('arbitrum_localnet:wbtc', 'solana_localnet:sol', 150_000n, { from: evmUser.address, to: sol.address }, secretHash);
  const solverBefore = await lamportsOf(solver.address);
  await initiateGasless(created);
  const funded = await orderReaches(created.order_id, ['awaiting_redeem']);
  assert.equal(await lamportsOf(solver.address), solverBefore - receive - (await feesOf([funded.destination_swap.initiate_tx_hash])) - (await rentOf(funded.destination_swap.swap_id)));
  // The client keeps its secret to itself; the destination's 375 slots run out.
  advance(400);
  const refunded = await until('the solver to refund its destination', async () => {
    const o = await readOrder(created.order_id);
    return o.destination_swap.refund_tx_hash ? o : undefined;
  }, 60_000, 200);
  const fees = await feesOf([refunded.destination_swap.initiate_tx_hash, refunded.destination_swap.refund_tx_hash]);
  assert.equal(await lamportsOf(solver.address), solverBefore - fees, 'the amount and the rent came back; the solver paid two fees');
  assert.equal(refunded.destination_swap.redeem_tx_hash, '');
});

/** The lamports a swap account (given as its hex swap id) holds beyond its swapped amount: its rent. */
async function rentOf(swapIdHex: string): Promise<bigint> {
  const { getAddressDecoder } = await import('@solana/kit');
  const account = getAddressDecoder().decode(Buffer.from(swapIdHex, 'hex'));
  const { value } = await rpc.getAccountInfo(account, { encoding: 'base64', commitment: 'confirmed' }).send();
  const data = Buffer.from(value!.data[0], 'base64');
  return value!.lamports - data.readBigUInt64LE(8);
}
