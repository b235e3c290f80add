// POST /v3/index wakes the source chain's watcher through the service's own wiring: `startService`
// (what `hashlock serve` and `hashlock dev` run) over a local EVM chain whose watcher polls once a
// minute. An initiate the client sends is not seen until the client reports it; then it is seen at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createWalletClient, http, type Address, type Hex } from 'viem';
import { loadRegistry } from '../../src/chains/registry.ts';
import { evmChainId } from '../../src/chains/evm/index.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { deployLocalnet } from '../../src/localnet/evm/devnet.ts';
import { startService, type Service } from '../../src/service.ts';
import { createApp } from '../../src/store/apps.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { LOCALNET_REGISTRY_PATH, SOLVER } from '../helpers/fixtures.ts';
import { chainlessServiceConfig } from '../helpers/service-config.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';

type Json = Record<string, any>;

const POLL_MS = 60_000;
const user = devAccount('user');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let node: AnvilNode;
before(async () => {
  const chain = loadRegistry(LOCALNET_REGISTRY_PATH).chain('ethereum_localnet')!;
  node = await startAnvil({ chainId: Number(evmChainId(chain)) });
  await deployLocalnet(chain, node.rpcUrl, node.chainId);
});
after(() => node?.stop());

describeEachStore('POST /v3/index in the service', (kind) => {
  let service: Service;
  let drop: () => Promise<void>;
  let key: string;
  before(async () => {
    const made = await chainlessServiceConfig(kind, { chains: { ethereum_localnet: { rpc_url: node.rpcUrl, poll_ms: POLL_MS } }, rate_limit: false });
    drop = made.drop;
    service = await startService(made.config);
    key = (await createApp(service.store.db, { name: 'v3 client' })).key;
    // No runtime reads arbitrum_localnet here: its liquidity is the store's.
    await setSolverBalance(service.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 10n ** 12n });
  });
  after(async () => {
    await service?.stop();
    await drop?.();
  });

  const request = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: { 'service-app-id': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const initiateSeen = async (id: string) => ((await request('GET', `/v3/orders/${id}`)).body.result as Json).source_swap.initiate_tx_hash as string;

  test(`an initiate reported through /v3/index is seen at once, though the watcher polls every ${POLL_MS / 1000} s`, async () => {
    // The watcher's first pass, at start, is behind us: the next one without a wake is a minute away.
    await until('the watcher\'s first pass', async () =>
      (await service.store.db.selectFrom('chain_heights').select('chain').where('chain', '=', 'ethereum_localnet').executeTakeFirst()) ?? undefined,
    );
    const created = await request('POST', '/v3/quote', {
      source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: '100000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address },
      slippage: 50,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const q = created.body.result.quotes[0] as Json;
    const wallet = createWalletClient({ account: user, transport: http(node.rpcUrl) });
    const send = (tx: { to: Address; data: Hex; value: Hex; gas_limit: Hex }) =>
      wallet.sendTransaction({ chain: undefined, to: tx.to, data: tx.data, value: BigInt(tx.value), gas: BigInt(tx.gas_limit) });
    if (q.initiate.approval_transaction) await send(q.initiate.approval_transaction);
    const hash = await send(q.initiate.initiate_transaction); // anvil mines it at once

    await pause(2_000);
    assert.equal(await initiateSeen(q.id), '', 'without the report the watcher has not looked yet');

    const reported = Date.now();
    const indexed = await request('POST', '/v3/index', { id: q.id, tx_hash: hash });
    assert.equal(indexed.status, 202, JSON.stringify(indexed.body));
    const seen = await until('the initiate seen', async () => ((await initiateSeen(q.id)) || undefined), 10_000, 50);
    assert.equal(seen, hash);
    const tookMs = Date.now() - reported;
    assert.ok(tookMs < 5_000, `seen ${tookMs} ms after the report, far sooner than the ${POLL_MS} ms poll`);
  });
});
