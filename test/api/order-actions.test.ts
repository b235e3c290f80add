// PATCH /v2|v3/orders/{id}?action=... end to end: orders made through POST /v2/orders, the relayer
// putting the actions on two real anvil chains, balances checked on chain.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { encodeFunctionData, erc20Abi, getAddress, hashTypedData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { refundTypedData } from '../../src/chains/solidity-htlc/typed-data.ts';
import { instantRefundSigned } from '../helpers/order-flags.ts';
import { createApp } from '../../src/store/apps.ts';
import { localnetRegistry, randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { evmClientActions } from '../../src/chains/evm/client-actions.ts';
import { evmEngine } from '../../src/chains/evm/driver.ts';
import { engineWorkers } from '../../src/engine/engine.ts';
import { AppError } from '../../src/errors.ts';
import { runWorker } from '../../src/lease-loop.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { acquireLease, releaseLease, solverLeaseName } from '../../src/store/leases.ts';
import { findOrder } from '../../src/store/orders.ts';
import { OrderRecorder } from '../../src/events/order-recorder.ts';
import { eventJson } from '../../src/events/order-event.ts';
import { htlcOrder, newSecret, openActionsApi, settled, startChains, type ActionsApi, type LocalChain } from '../relayer/harness.ts';

const registry = localnetRegistry();
let chains: Awaited<ReturnType<typeof startChains>>;
const user = devAccount('user');
const solver = devAccount('solver');
const relayer = devAccount('relayer');
const AMOUNT = 100_000n;
const DEST_AMOUNT = 99_700n;

before(async () => {
  chains = await startChains(registry);
});
after(async () => {
  await Promise.all(Object.values(chains).map((c) => c.node.stop()));
});

describeEachStore('PATCH order actions', (kind) => {
  let t: ActionsApi;
  let eth: LocalChain;
  let arb: LocalChain;

  before(async () => {
    t = await openActionsApi(kind, registry, chains);
    eth = chains.ethereum_localnet;
    arb = chains.arbitrum_localnet;
  });
  after(() => t.close());

  const patch = async (version: 'v2' | 'v3', orderId: string, action: string, payload?: object, key = t.key) => {
    const res = await t.api.inject({
      method: 'PATCH',
      url: `/${version}/orders/${orderId}?action=${action}`,
      headers: { 'service-app-id': key },
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json<Record<string, any>>() };
  };

  /** A WBTC order ethereum -> arbitrum whose secret the test keeps. */
  async function createOrder() {
    const { secret, secretHash } = newSecret();
    const res = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key },
      payload: {
        source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: DEST_AMOUNT.toString() },
        nonce: randomHex32().slice(0, 20),
        secret_hash: secretHash,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const result = res.json<Record<string, any>>().result;
    const order = (await t.api.inject({ url: `/v2/orders/${result.order_id}`, headers: { 'service-app-id': t.key } })).json<Record<string, any>>().result;
    return { id: result.order_id as string, created: result, order, secret };
  }

  /** The user approves the HTLC (the create response's approval transaction) and signs the typed data. */
  async function approveAndSign(created: Record<string, any>, signer = user): Promise<Hex> {
    const approval = created.approval_transaction;
    const hash = await eth.wallet(user).sendTransaction({ account: user, chain: undefined, to: approval.to, data: approval.data });
    assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
    const td = created.typed_data;
    return signer.signTypedData({
      domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
      types: { Initiate: td.types.Initiate },
      primaryType: 'Initiate',
      message: { ...td.message, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
    });
  }

  async function initiated() {
    const o = await createOrder();
    const signature = await approveAndSign(o.created);
    const res = await patch('v2', o.id, 'initiate', { signature });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal((await settled(t.store, `${o.id}:initiate`)).status, 'confirmed');
    return o;
  }

  /** The solver funds the destination itself, as its own loop would. */
  async function solverInitiatesDestination(o: Awaited<ReturnType<typeof createOrder>>) {
    const htlcAbi = contractArtifact('HTLC').abi;
    const { wbtc, wbtcHtlc } = arb.deployment.contracts;
    const w = arb.wallet(solver);
    const send = async (hash: Hex) => assert.equal((await arb.client.waitForTransactionReceipt({ hash })).status, 'success');
    await send(await w.writeContract({ account: solver, chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, DEST_AMOUNT] }));
    const d = o.order.destination_swap;
    await send(
      await w.writeContract({
        account: solver,
        chain: undefined,
        address: wbtcHtlc,
        abi: htlcAbi,
        functionName: 'initiate',
        args: [getAddress(d.redeemer), BigInt(d.timelock), DEST_AMOUNT, `0x${d.secret_hash}`],
      }),
    );
    const onChain = await htlcOrder(arb, d.swap_id);
    assert.equal(onChain.amount, DEST_AMOUNT, 'the destination swap id is the contract order id');
  }

  /** The source initiator's consent to an instant refund: its signature of Refund(orderId) in the HTLC domain. */
  const refundConsent = (swapId: string, signer: { signTypedData: typeof user.signTypedData } = user) =>
    signer.signTypedData(refundTypedData({ chainId: 31337n, htlc: eth.deployment.contracts.wbtcHtlc, orderId: `0x${swapId}` }));

  const jobCount = async (orderId: string) =>
    (await t.store.db.selectFrom('relayer_jobs').select('id').where('order_id', '=', orderId).execute()).length;
  const relayerNonce = () => eth.client.getTransactionCount({ address: relayer.address });

  test('initiate: the relayer puts initiateWithSignature on chain with the signed terms; ten concurrent PATCHes make one transaction', async () => {
    const o = await createOrder();
    const signature = await approveAndSign(o.created);
    const userBefore = await eth.wbtcBalance(user.address);
    const htlcBefore = await eth.wbtcBalance(eth.deployment.contracts.wbtcHtlc);
    const nonceBefore = await relayerNonce();

    const answers = await Promise.all(Array.from({ length: 10 }, () => patch('v2', o.id, 'initiate', { signature })));
    for (const a of answers) assert.equal(a.status, 202, JSON.stringify(a.body));
    const hashes = new Set(answers.map((a) => a.body.result));
    assert.equal(hashes.size, 1, `one transaction hash for all: ${[...hashes].join(', ')}`);
    const [hash] = [...hashes];
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    assert.equal(answers[0]!.body.status, 'Ok');

    const job = await settled(t.store, `${o.id}:initiate`);
    assert.equal(job.status, 'confirmed');
    assert.equal(job.txHash, hash);
    assert.equal(await jobCount(o.id), 1);
    assert.equal(await relayerNonce(), nonceBefore + 1, 'the relayer sent exactly one transaction');
    const receipt = await eth.client.getTransactionReceipt({ hash });
    assert.equal(receipt.from.toLowerCase(), relayer.address.toLowerCase());

    const onChain = await htlcOrder(eth, o.order.source_swap.swap_id);
    assert.equal(onChain.initiator, getAddress(USER));
    assert.equal(onChain.redeemer, getAddress(SOLVER.addresses.ethereum_localnet!));
    assert.equal(onChain.amount, AMOUNT);
    assert.equal(onChain.timelock, 600n);
    assert.equal(await eth.wbtcBalance(user.address), userBefore - AMOUNT);
    assert.equal(await eth.wbtcBalance(eth.deployment.contracts.wbtcHtlc), htlcBefore + AMOUNT);

    // Asked again later: the same job and hash, no new transaction.
    const again = await patch('v2', o.id, 'initiate', { signature });
    assert.equal(again.status, 202);
    assert.equal(again.body.result, hash);
    assert.equal(again.body.job.status, 'confirmed');
    assert.equal(await relayerNonce(), nonceBefore + 1);
  });

  test('initiate: a signature by another key is 400 and makes no job; another app is 403; a past deadline is 409', async () => {
    const o = await createOrder();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const signature = await approveAndSign(o.created, stranger as unknown as typeof user);
    const bad = await patch('v2', o.id, 'initiate', { signature });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^invalid body field 'signature': signed by 0x[0-9a-fA-F]{40}, not by the source initiator/);
    assert.equal(bad.body.code, 'invalid_signature');
    assert.equal((await patch('v2', o.id, 'initiate', { signature: '0x1234' })).status, 400);
    const missing = await patch('v2', o.id, 'initiate', {});
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /'signature': is required/);
    assert.equal(await jobCount(o.id), 0);

    const good = await approveAndSign(o.created);
    const { key: plainKey } = await createApp(t.store.db, { name: 'not gasless', gasless: false });
    const forbidden = await patch('v2', o.id, 'initiate', { signature: good }, plainKey);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.code, 'forbidden');

    await t.store.db.updateTable('orders').set({ deadline: String(Math.floor(Date.now() / 1000) - 10) }).where('id', '=', o.id).execute();
    const late = await patch('v2', o.id, 'initiate', { signature: good });
    assert.equal(late.status, 409);
    assert.match(late.body.error, /deadline/);
    assert.equal(await jobCount(o.id), 0);
    assert.equal((await htlcOrder(eth, o.order.source_swap.swap_id)).amount, 0n, 'nothing on chain');
  });

  test('initiate by a contract initiator (ERC-1271): its owner signs, the HTLC pulls from the contract; another key is 400', async () => {
    const { abi, bytecode } = contractArtifact('TestWallet');
    const deployed = await eth.client.waitForTransactionReceipt({
      hash: await eth.wallet(user).deployContract({ account: user, chain: undefined, abi, bytecode, args: [user.address] }),
    });
    const contractWallet = getAddress(deployed.contractAddress!);
    const { wbtc, wbtcHtlc } = eth.deployment.contracts;
    const send = async (hash: Hex) => assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
    await send(await eth.wallet(user).writeContract({ account: user, chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'transfer', args: [contractWallet, AMOUNT] }));
    await send(
      await eth.wallet(user).writeContract({
        account: user,
        chain: undefined,
        address: contractWallet,
        abi,
        functionName: 'execute',
        args: [wbtc, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, AMOUNT] })],
      }),
    );
    const res = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key },
      payload: {
        source: { asset: 'ethereum_localnet:wbtc', owner: contractWallet, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: DEST_AMOUNT.toString() },
        secret_hash: newSecret().secretHash,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<Record<string, any>>().result;
    const td = created.typed_data;
    const signWith = (account: { signTypedData: typeof user.signTypedData }) =>
      account.signTypedData({
        domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
        types: { Initiate: td.types.Initiate },
        primaryType: 'Initiate',
        message: { ...td.message, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
      });

    const stranger = await patch('v2', created.order_id, 'initiate', { signature: await signWith(privateKeyToAccount(generatePrivateKey())) });
    assert.equal(stranger.status, 400);
    assert.match(stranger.body.error, /initiator contract .* does not accept it/);
    assert.equal(await jobCount(created.order_id), 0);
    const strangerConsent = await patch('v2', created.order_id, 'instant-refund', { signature: await refundConsent(randomHex32(), user) });
    assert.equal(strangerConsent.status, 400, 'a consent over another order id is no consent');

    const ok = await patch('v2', created.order_id, 'initiate', { signature: await signWith(user) });
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
    assert.equal((await settled(t.store, `${created.order_id}:initiate`)).status, 'confirmed');
    const order = (await t.api.inject({ url: `/v2/orders/${created.order_id}`, headers: { 'service-app-id': t.key } })).json<Record<string, any>>().result;
    const onChain = await htlcOrder(eth, order.source_swap.swap_id);
    assert.equal(onChain.initiator, contractWallet, 'the contract is the initiator');
    assert.equal(onChain.amount, AMOUNT);
    assert.equal(await eth.wbtcBalance(contractWallet), 0n, 'the HTLC pulled the amount from the contract');

    // Its instant refund: the contract accepts its owner's signature of Refund(orderId) (ERC-1271).
    const byStranger = await patch('v3', created.order_id, 'instant-refund', { signature: await refundConsent(order.source_swap.swap_id, privateKeyToAccount(generatePrivateKey())) });
    assert.equal(byStranger.status, 400);
    assert.match(byStranger.body.error, /initiator contract .* does not accept it for Refund\(orderId\)/);
    assert.equal(await instantRefundSigned(t.store.db, created.order_id), false);
    const refunded = await patch('v3', created.order_id, 'instant-refund', { signature: await refundConsent(order.source_swap.swap_id) });
    assert.equal(refunded.status, 202, JSON.stringify(refunded.body));
    assert.equal((await settled(t.store, `${created.order_id}:instant-refund`)).status, 'confirmed');
    assert.equal(await eth.wbtcBalance(contractWallet), AMOUNT, 'the contract initiator has its tokens back');
  });

  test('action validation: unknown actions name the allowed ones; v3 takes refund and instant-refund only; unknown orders are 404', async () => {
    const id = randomHex32();
    const v2 = await patch('v2', id, 'explode');
    assert.equal(v2.status, 400);
    assert.equal(v2.body.error, "invalid query parameter 'action': must be one of: initiate, redeem, refund, instant-refund");
    const v3 = await patch('v3', id, 'redeem');
    assert.equal(v3.status, 400);
    assert.equal(v3.body.error, "invalid query parameter 'action': must be one of: refund, instant-refund");
    assert.equal((await patch('v2', id, 'refund')).status, 404);
    const noKey = await t.api.inject({ method: 'PATCH', url: `/v2/orders/${id}?action=refund` });
    assert.equal(noKey.statusCode, 401);
  });

  test('redeem: a wrong secret is 400; the right one redeems the destination for the user through the relayer', async () => {
    const o = await initiated();
    const early = await patch('v2', o.id, 'redeem', { secret: o.secret.slice(2) });
    assert.equal(early.status, 409, 'the destination is not initiated yet');
    await solverInitiatesDestination(o);

    const wrong = await patch('v2', o.id, 'redeem', { secret: randomHex32() });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, "invalid body field 'secret': its sha256 is not the order's secret_hash");
    assert.equal(wrong.body.code, 'secret_mismatch');
    const short = await patch('v2', o.id, 'redeem', { secret: o.secret.slice(0, 64) });
    assert.equal(short.status, 400);
    assert.match(short.body.error, /'secret': must be the 32-byte secret/);
    assert.equal(await jobCount(o.id), 1, 'only the initiate job');

    const userBefore = await arb.wbtcBalance(user.address);
    const res = await patch('v2', o.id, 'redeem', { secret: o.secret.slice(2) });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.ok(!JSON.stringify(res.body).includes(o.secret.slice(2)), 'the secret is not echoed');
    // Rule 7: the job as the API shows it, never its payload (which holds the secret).
    assert.deepEqual(Object.keys(res.body.job).sort(), ['action', 'attempts', 'id', 'last_error', 'status', 'tx_hash']);
    const job = await settled(t.store, `${o.id}:redeem`);
    assert.equal(job.status, 'confirmed');
    assert.equal(job.txHash, res.body.result);
    assert.equal(await arb.wbtcBalance(user.address), userBefore + DEST_AMOUNT, 'the user received the destination amount');
    assert.notEqual((await htlcOrder(arb, o.order.destination_swap.swap_id)).fulfilledAt, 0n);
    const receipt = await arb.client.getTransactionReceipt({ hash: res.body.result });
    assert.equal(receipt.from.toLowerCase(), relayer.address.toLowerCase(), 'the relayer paid the gas');
  });

  test('refund: 409 before the source is initiated and before expiry; after the timelock the user gets the tokens back', async () => {
    const fresh = await createOrder();
    const notInitiated = await patch('v2', fresh.id, 'refund');
    assert.equal(notInitiated.status, 409);
    assert.match(notInitiated.body.error, /not initiated on chain/);

    const userStart = await eth.wbtcBalance(user.address);
    const o = await initiated();
    assert.equal(await eth.wbtcBalance(user.address), userStart - AMOUNT);
    const early = await patch('v3', o.id, 'refund', {});
    assert.equal(early.status, 409);
    assert.match(early.body.error, /has not expired: refundable from block \d+/);
    assert.equal(await jobCount(o.id), 1);

    const onChain = await htlcOrder(eth, o.order.source_swap.swap_id);
    const latest = await eth.client.getBlockNumber();
    const target = onChain.initiatedAt + onChain.timelock; // the refund then lands in target + 1
    await eth.node.rpc('anvil_mine', [`0x${(target - latest).toString(16)}`]);
    const res = await patch('v3', o.id, 'refund');
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal((await settled(t.store, `${o.id}:refund`)).status, 'confirmed');
    assert.equal(await eth.wbtcBalance(user.address), userStart, 'the user has the tokens back');
    assert.notEqual((await htlcOrder(eth, o.order.source_swap.swap_id)).fulfilledAt, 0n);
  });

  test('instant-refund: the initiator must sign Refund(orderId); then the solver co-signs once for concurrent requests, the order is flagged and the user is refunded', async () => {
    const userStart = await eth.wbtcBalance(user.address);
    const o = await initiated();
    assert.equal(await instantRefundSigned(t.store.db, o.id), false);
    const unsigned = await patch('v3', o.id, 'instant-refund', {});
    assert.equal(unsigned.status, 400, 'no instant refund without the initiator\'s consent');
    assert.match(unsigned.body.error, /'signature': is required/);
    const byStranger = await patch('v3', o.id, 'instant-refund', { signature: await refundConsent(o.order.source_swap.swap_id, privateKeyToAccount(generatePrivateKey())) });
    assert.equal(byStranger.status, 400);
    assert.match(byStranger.body.error, /^invalid body field 'signature': signed by 0x[0-9a-fA-F]{40}, not by the source initiator .* over Refund\(orderId\)/);
    assert.equal(byStranger.body.code, 'invalid_signature');
    assert.equal(await instantRefundSigned(t.store.db, o.id), false, 'a refused request flags nothing');
    assert.equal(await jobCount(o.id), 1, 'only the initiate job');
    const consent = await refundConsent(o.order.source_swap.swap_id);
    const nonceBefore = await relayerNonce();
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => patch(i % 2 ? 'v2' : 'v3', o.id, 'instant-refund', { signature: consent })));
    for (const a of answers) assert.equal(a.status, 202, JSON.stringify(a.body));
    assert.equal(new Set(answers.map((a) => a.body.job.id)).size, 1, 'one job for every request');
    const res = answers[0]!;
    const job = await settled(t.store, `${o.id}:instant-refund`);
    assert.equal(job.status, 'confirmed');
    assert.equal(await jobCount(o.id), 2, 'the initiate job and one instant-refund job');
    assert.equal(await relayerNonce(), nonceBefore + 1, 'the relayer sent exactly one transaction');
    assert.equal(await instantRefundSigned(t.store.db, o.id), true, 'the solver must never fund this destination');
    assert.equal(await eth.wbtcBalance(user.address), userStart);
    assert.notEqual((await htlcOrder(eth, o.order.source_swap.swap_id)).fulfilledAt, 0n);
    const again = await patch('v2', o.id, 'instant-refund', { signature: consent });
    assert.equal(again.status, 202);
    assert.equal(again.body.result, job.txHash);
    assert.equal(again.body.job.id, res.body.job.id);
  });

  test("instant-refund as Garden's docs show it: GET instant-refund-hash answers the Refund(orderId) digest, and the initiator's raw signature of it refunds", async () => {
    const userStart = await eth.wbtcBalance(user.address);
    const o = await initiated();
    const hash = await t.api.inject({ url: `/v2/orders/${o.id}/instant-refund-hash`, headers: { 'garden-app-id': t.key } });
    assert.equal(hash.statusCode, 200, hash.body);
    const digest = hash.json<{ result: Hex }>().result;
    assert.match(digest, /^0x[0-9a-f]{64}$/);
    const typed = refundTypedData({ chainId: 31337n, htlc: getAddress(eth.deployment.contracts.wbtcHtlc), orderId: `0x${o.order.source_swap.swap_id}` });
    assert.equal(digest, hashTypedData(typed), "the digest is the EIP-712 hash of this source's Refund(orderId)");
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await patch('v2', o.id, 'instant-refund', { signature: await stranger.sign({ hash: digest }) });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.error, /not by the source initiator/);
    const res = await patch('v2', o.id, 'instant-refund', { signature: await user.sign({ hash: digest }) });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal((await settled(t.store, `${o.id}:instant-refund`)).status, 'confirmed');
    assert.equal(await eth.wbtcBalance(user.address), userStart, 'the user has its tokens back');
    const bitcoinRoute = await t.api.inject({ method: 'POST', url: '/relayer/bitcoin/instant-refund-hash', headers: { 'garden-app-id': t.key }, payload: { order_id: o.id } });
    assert.equal(bitcoinRoute.statusCode, 400, 'the Bitcoin relayer route serves Bitcoin-family orders only');
  });

  test('instant-refund-hash of an EVM source is 409 once the destination is initiated', async () => {
    const o = await initiated();
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: `0x${randomHex32()}` }).where('order_id', '=', o.id).where('side', '=', 'destination').execute();
    const res = await t.api.inject({ url: `/v2/orders/${o.id}/instant-refund-hash`, headers: { 'service-app-id': t.key } });
    assert.equal(res.statusCode, 409, res.body);
    assert.match(res.json<{ error: string }>().error, /destination is initiated/);
  });

  test('instant-refund: once the destination is initiated it is 409, nothing is flagged and the source stays locked', async () => {
    const o = await initiated();
    await solverInitiatesDestination(o);
    // What the watcher records when it sees the destination initiated.
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: `0x${randomHex32()}` }).where('order_id', '=', o.id).where('side', '=', 'destination').execute();
    const arbBefore = await arb.wbtcBalance(user.address);
    const res = await patch('v3', o.id, 'instant-refund', { signature: await refundConsent(o.order.source_swap.swap_id) });
    assert.equal(res.status, 409);
    assert.match(res.body.error, /destination is initiated/);
    assert.equal(await instantRefundSigned(t.store.db, o.id), false);
    assert.equal(await jobCount(o.id), 1);
    const source = await htlcOrder(eth, o.order.source_swap.swap_id);
    assert.equal(source.fulfilledAt, 0n);
    assert.equal(source.amount, AMOUNT);
    assert.equal(await arb.wbtcBalance(user.address), arbBefore);
  });

  test("instant-refund on an instance without the solver's key (role api): 503 while no instance runs the order's solver; with its lease held, the solver's own sender refunds with no signature", async () => {
    const o = await initiated();
    const keyless = evmClientActions(t.store.db, registry, { client: eth.client });
    const record = (await findOrder(t.store.db, o.id))!;
    const consent = { signature: await refundConsent(o.order.source_swap.swap_id) };
    await assert.rejects(keyless.perform(record, 'instant-refund', consent), (err: unknown) => err instanceof AppError && err.code === 'unavailable' && /no instance runs this order's solver/.test(err.message));
    assert.equal(await instantRefundSigned(t.store.db, o.id), false, 'refused before the gate');

    // The workers run the order's solver (its lease), and its sender on this chain signs the solver's jobs.
    assert.ok(await acquireLease(t.store.db, solverLeaseName(SOLVER.id), 'workers', 60_000));
    const job = await keyless.perform(record, 'instant-refund', consent);
    assert.equal(job.signer, 'solver');
    assert.equal((job.payload as { signature: string }).signature, '0x');
    const userBefore = await eth.wbtcBalance(user.address);
    const solverSender = evmEngine({ db: t.store.db, chain: 'ethereum_localnet', chainId: 31337, rpcUrl: eth.node.rpcUrl, privateKey: privateKeyOf(devAccount('solver')), signer: 'solver', recheckMs: 50, retryMs: 200 });
    const loops = engineWorkers(solverSender, 20).map((w) => runWorker(t.store.db, w, { holder: 'workers', onError: () => undefined }));
    try {
      assert.equal((await settled(t.store, `${o.id}:instant-refund`)).status, 'confirmed');
    } finally {
      await Promise.all(loops.map((loop) => loop.stop()));
      await releaseLease(t.store.db, solverLeaseName(SOLVER.id), 'workers');
    }
    assert.equal(await eth.wbtcBalance(user.address), userBefore + AMOUNT, 'the user has its source back');
    assert.equal(await instantRefundSigned(t.store.db, o.id), true, 'rule 5: the solver never funds it now');
  });

  test('a relayed initiate that reverts is told to its client: failed_actions with the decoded revert, an order.action_failed event; fixed, the same PATCH is carried out', async () => {
    const o = await createOrder();
    const recorder = new OrderRecorder(t.store.db);
    await recorder.tick(); // the order's created event
    // Signed, but its allowance taken back: the gasless initiate reverts in simulation.
    const signature = await approveAndSign(o.created);
    const revoke = await eth.wallet(user).writeContract({ account: user, chain: undefined, address: eth.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'approve', args: [eth.deployment.contracts.wbtcHtlc, 0n] });
    assert.equal((await eth.client.waitForTransactionReceipt({ hash: revoke })).status, 'success');
    const first = await patch('v2', o.id, 'initiate', { signature });
    // Failed while the request waited (this relayer retries every 200 ms): the answer says so; a slower
    // failure is answered 202 and told by the order and its events only.
    if (first.status !== 202) assert.deepEqual([first.status, first.body.code, first.body.error], [409, 'action_failed', 'initiate: the relayer could not complete it: reverted: ERC20InsufficientAllowance']);
    const failed = await settled(t.store, `${o.id}:initiate`);
    assert.equal(failed.status, 'failed');

    const read = async () => (await t.api.inject({ url: `/v2/orders/${o.id}`, headers: { 'service-app-id': t.key } })).json<Record<string, any>>().result;
    const order = await read();
    assert.equal(order.status, 'created');
    assert.equal(order.failed_actions.length, 1);
    assert.equal(order.failed_actions[0].action, 'initiate');
    assert.match(order.failed_actions[0].reason, /reverted: ERC20InsufficientAllowance/);
    assert.match(order.failed_actions[0].failed_at, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    recorder.touch(o.id);
    const told = (await recorder.tick()).filter((e) => e.orderId === o.id);
    assert.deepEqual(told.map((e) => [e.type, e.status]), [['order.action_failed', 'created']]);
    assert.match(JSON.parse(told[0]!.orderJson).failed_actions[0].reason, /ERC20InsufficientAllowance/);
    assert.match(eventJson(told[0]!), /"type":"order\.action_failed"/);
    recorder.touch(o.id);
    assert.deepEqual((await recorder.tick()).filter((e) => e.orderId === o.id), [], 'told once');

    // The client approves again and asks again: carried out, and the failure leaves the order.
    const approval = o.created.approval_transaction;
    const approved = await eth.wallet(user).sendTransaction({ account: user, chain: undefined, to: approval.to, data: approval.data });
    assert.equal((await eth.client.waitForTransactionReceipt({ hash: approved })).status, 'success');
    const again = await patch('v2', o.id, 'initiate', { signature });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal((await settled(t.store, `${o.id}:initiate`)).status, 'confirmed');
    assert.deepEqual((await read()).failed_actions, []);
    assert.equal((await htlcOrder(eth, o.order.source_swap.swap_id)).amount, AMOUNT, 'the source is funded');
  });

  test('who may act: another app gets 403 on every action and nothing is sent; the creating app needs the gasless flag', async () => {
    const o = await initiated();
    await solverInitiatesDestination(o);
    const consent = await refundConsent(o.order.source_swap.swap_id);
    const nonceBefore = await relayerNonce();
    const foreignPlain = (await createApp(t.store.db, { name: 'another app', gasless: false })).key;
    const foreignGasless = (await createApp(t.store.db, { name: 'another gasless app', gasless: true })).key;
    for (const key of [foreignPlain, foreignGasless]) {
      for (const [version, action, body] of [
        ['v3', 'instant-refund', {}],
        ['v2', 'instant-refund', { signature: consent }],
        ['v2', 'redeem', { secret: o.secret.slice(2) }],
        ['v3', 'refund', {}],
        ['v2', 'initiate', { signature: consent }],
      ] as const) {
        const res = await patch(version, o.id, action, body, key);
        assert.equal(res.status, 403, `${action}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'forbidden');
        assert.match(res.body.error, /created by another app/);
      }
    }
    assert.equal(await jobCount(o.id), 1, 'only the initiate job');
    assert.equal(await instantRefundSigned(t.store.db, o.id), false, 'the order was not flagged for an instant refund');
    assert.equal(await relayerNonce(), nonceBefore, 'the relayer sent nothing');
    assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).fulfilledAt, 0n, 'the destination is still open');

    // An app without the gasless flag, on its own order: every relayed action is 403.
    const plain = (await createApp(t.store.db, { name: 'plain app', gasless: false })).key;
    const created = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': plain },
      payload: {
        source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: DEST_AMOUNT.toString() },
        secret_hash: newSecret().secretHash,
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const own = created.json<Record<string, any>>().result.order_id as string;
    for (const [action, body] of [
      ['initiate', { signature: consent }],
      ['redeem', { secret: randomHex32() }],
      ['refund', {}],
      ['instant-refund', { signature: consent }],
    ] as const) {
      const res = await patch('v2', own, action, body, plain);
      assert.equal(res.status, 403, `${action}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, /gasless actions are not enabled for this app/);
    }
    assert.equal(await jobCount(own), 0);
  });

  test('a Bitcoin-family source is not initiated by signature; native ether cannot be initiated by signature', async () => {
    const native = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key },
      payload: {
        source: { asset: 'ethereum_localnet:eth', owner: USER, amount: '10000000000000000' },
        destination: { asset: 'arbitrum_localnet:eth', owner: USER, amount: '9970000000000000' },
        nonce: randomHex32().slice(0, 20),
      },
    });
    assert.equal(native.statusCode, 201, native.body);
    const res0 = await patch('v2', native.json<Record<string, any>>().result.order_id, 'initiate', { signature: `0x${'11'.repeat(65)}` });
    assert.equal(res0.status, 400);
    assert.match(res0.body.error, /native ether/);
    // A Litecoin-source order, written directly.
    const { sampleOrder } = await import('../helpers/fixtures.ts');
    const { insertOrder } = await import('../../src/store/orders.ts');
    const owner = await t.store.db.selectFrom('orders').select('app_id').where('id', '=', native.json<Record<string, any>>().result.order_id).executeTakeFirstOrThrow();
    const ltc = sampleOrder(owner.app_id, {
      source: { swapId: randomHex32(), chain: 'litecoin_localnet', asset: 'litecoin_localnet:ltc', initiator: 'x', redeemer: 'y', timelock: 60n, amount: 100000n, assetPrice: 90, requiredConfirmations: 1 },
    });
    await insertOrder(t.store.db, ltc);
    const res = await patch('v2', ltc.id, 'initiate', { signature: `0x${'11'.repeat(65)}` });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /initiate: a Bitcoin-family source is initiated by sending `amount` to the HTLC address `to`/);
  });
});
