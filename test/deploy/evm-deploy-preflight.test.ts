// `hashlock deploy` on an EVM chain that starts empty: a plain anvil, a deployer key funded as a faucet
// would, standard JSON-RPC only. It deploys each ERC-20 asset's HTLC, the NativeHTLC and FeeClaim,
// finds them again by their code (a second run sends nothing), refuses a node of another chain and a
// registry address that holds other code, and the registry then reads the addresses it recorded.
// Then `hashlock preflight`'s checks of the chain and of the database, green and red.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, createWalletClient, getAddress, http, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { loadRegistry } from '../../src/chains/registry.ts';
import { runtimeCodeHash } from '../../src/chains/solidity-htlc/artifacts.ts';
import type { ServiceConfig } from '../../src/config/service-config.ts';
import { deployChain } from '../../src/deploy/deploy.ts';
import { deploymentPath } from '../../src/deploy/deployment-file.ts';
import { WrongChainError } from '../../src/deploy/family-deployer.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import type { CheckRow } from '../../src/preflight/family-preflight.ts';
import { chainChecks, databaseChecks } from '../../src/preflight/preflight.ts';
import { migrate, openStore } from '../../src/store/database.ts';
import { createDatabase } from '../helpers/stores.ts';
import { LOCALNET_REGISTRY_PATH } from '../helpers/fixtures.ts';

const CHAIN_ID = 31337;
let node: AnvilNode;
let token: Address;
const deployerKey = generatePrivateKey();
const deployer = privateKeyToAccount(deployerKey);
const feeSigner = privateKeyToAccount(generatePrivateKey()).address;

const client = () => createPublicClient({ transport: http(node.rpcUrl) });

before(async () => {
  node = await startAnvil({ chainId: CHAIN_ID });
  // A faucet: anvil's first genesis account pays the new deployer; the deployer creates the test token.
  const faucet = createWalletClient({ account: devAccount('deployer'), transport: http(node.rpcUrl), chain: undefined });
  await client().waitForTransactionReceipt({ hash: await faucet.sendTransaction({ chain: null, to: deployer.address, value: parseEther('10') }) });
  const wallet = createWalletClient({ account: deployer, transport: http(node.rpcUrl), chain: undefined });
  const { abi, bytecode } = contractArtifact('TestToken');
  const receipt = await client().waitForTransactionReceipt({ hash: await wallet.deployContract({ chain: null, abi, bytecode, args: ['USD Coin (test)', 'USDC', 6, deployer.address] }) });
  token = getAddress(receipt.contractAddress!);
});
after(() => node?.stop());

/** A registry of one EVM chain (ETH and USDC, HTLC addresses as given) and a config reaching it. */
function setup(options: { chainId?: number; usdcHtlc?: string } = {}): ServiceConfig {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-deploy-'));
  const local = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as {
    network: string;
    chains: Array<{ chain: string; id: string; assets: Array<{ symbol: string; htlc: { address: string }; token: { address: string } }> }>;
  };
  const chain = local.chains.find((c) => c.chain === 'ethereum_localnet')!;
  chain.id = `evm:${options.chainId ?? CHAIN_ID}`;
  chain.assets = chain.assets.filter((a) => a.symbol === 'eth' || a.symbol === 'usdc');
  for (const asset of chain.assets) asset.htlc.address = asset.symbol === 'usdc' ? (options.usdcHtlc ?? '') : '';
  chain.assets.find((a) => a.symbol === 'usdc')!.token.address = token;
  const registryPath = join(dir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify({ network: 'localnet', chains: [chain] }));
  return { registryPath, chains: { ethereum_localnet: { rpc_url: node.rpcUrl } } } as unknown as ServiceConfig;
}

const run = (config: ServiceConfig, lines: string[] = []) =>
  deployChain({ config, chainKey: 'ethereum_localnet', assetIds: [], deployerKey: Buffer.from(deployerKey.slice(2), 'hex'), options: { feeSigner }, log: (line) => lines.push(line) });

const nonce = () => client().getTransactionCount({ address: deployer.address });

test('deploys the HTLC of each ERC-20 asset, the NativeHTLC and FeeClaim; a second run finds them by their code and sends nothing', async () => {
  const config = setup();
  const first = await run(config);
  assert.equal(first.created, 3);
  const byContract = (name: string) => first.deployment.contracts.find((c) => c.contract === name)!;
  for (const name of ['HTLC', 'NativeHTLC', 'FeeClaim']) {
    const deployed = byContract(name);
    const code = (await client().getCode({ address: deployed.address as Address }))!;
    assert.equal(runtimeCodeHash(code, contractArtifact(name)), contractArtifact(name).codeHash, `${name}'s code on chain`);
    assert.match(deployed.transaction ?? '', /^0x[0-9a-f]{64}$/);
  }
  const read = (address: string, name: string, functionName: string) => client().readContract({ address: address as Address, abi: contractArtifact(name).abi, functionName });
  assert.equal(await read(byContract('HTLC').address, 'HTLC', 'token'), token);
  assert.equal(await read(byContract('FeeClaim').address, 'FeeClaim', 'signer'), feeSigner);
  assert.equal(await read(byContract('FeeClaim').address, 'FeeClaim', 'owner'), deployer.address);
  assert.deepEqual(byContract('HTLC').assets, ['ethereum_localnet:usdc']);
  assert.equal(first.deployment.chain_id, `evm:${CHAIN_ID}`);

  const sent = await nonce();
  const lines: string[] = [];
  const second = await run(config, lines);
  assert.equal(second.created, 0);
  assert.equal(await nonce(), sent, 'the second run sent no transaction');
  assert.deepEqual(
    second.deployment.contracts.map((c) => [c.contract, c.address, c.transaction]),
    first.deployment.contracts.map((c) => [c.contract, c.address, c.transaction]),
  );
  assert.ok(lines.every((line) => line.includes('found at')), lines.join('\n'));

  // The service reads the deployment file over the registry's empty addresses.
  assert.equal(first.path, deploymentPath(config.registryPath));
  const registry = loadRegistry(config.registryPath);
  assert.equal(registry.asset('ethereum_localnet:usdc')!.htlc.address, byContract('HTLC').address);
  assert.equal(registry.asset('ethereum_localnet:eth')!.htlc.address, byContract('NativeHTLC').address);
  assert.equal(registry.chain('ethereum_localnet')!.feeClaim, byContract('FeeClaim').address);
});

test('--asset deploys only the named assets\' HTLCs: no FeeClaim', async () => {
  const config = setup();
  const only = await deployChain({ config, chainKey: 'ethereum_localnet', assetIds: ['ethereum_localnet:usdc'], deployerKey: Buffer.from(deployerKey.slice(2), 'hex'), options: { feeSigner }, log: () => {} });
  assert.deepEqual(only.deployment.contracts.map((c) => [c.contract, c.assets]), [['HTLC', ['ethereum_localnet:usdc']]]);
});

test('a node of another chain is refused before anything is sent', async () => {
  const sent = await nonce();
  await assert.rejects(run(setup({ chainId: 11155111 })), (err: unknown) => err instanceof WrongChainError && /serves chain evm:31337, the registry names evm:11155111; nothing was deployed/.test(err.message));
  assert.equal(await nonce(), sent);
});

test('a registry HTLC address that holds other code is refused before anything is sent', async () => {
  const sent = await nonce();
  await assert.rejects(run(setup({ usdcHtlc: token })), /the registry names 0x[0-9a-fA-F]{40}, whose code is not the HTLC artifact's with token\(\) 0x[0-9a-fA-F]{40}; nothing was deployed/);
  assert.equal(await nonce(), sent);
  const empty: Hex = getAddress(`0x${'12'.repeat(20)}`);
  await assert.rejects(run(setup({ usdcHtlc: empty })), /whose code is not the HTLC artifact's/);
});

describe('hashlock preflight on the deployed chain', () => {
  const check = (rows: CheckRow[], name: string) => rows.find((r) => r.check === name);
  const errors = (rows: CheckRow[]) => rows.filter((r) => r.status === 'error');

  const deployed = async (minimums?: Record<string, string>) => {
    const config = setup();
    await run(config);
    const relayer = privateKeyToAccount(generatePrivateKey());
    const withAccess: ServiceConfig = {
      ...config,
      solvers: [],
      keys: {},
      chains: { ethereum_localnet: { rpc_url: node.rpcUrl, relayer: relayer.address, ...(minimums ? { minimum_balances: minimums } : {}) } },
    };
    return withAccess;
  };

  test('green on the deployed chain: chain id, each contract\'s code, token decimals, clock', async () => {
    const config = await deployed();
    const rows = await chainChecks(config, loadRegistry(config.registryPath), Date.now());
    assert.deepEqual(errors(rows), []);
    assert.equal(check(rows, 'chain id')?.detail, `evm:${CHAIN_ID}`);
    assert.match(check(rows, 'code usdc')!.detail, /^HTLC at 0x/);
    assert.match(check(rows, 'code eth')!.detail, /^NativeHTLC at 0x/);
    assert.match(check(rows, 'code FeeClaim')!.detail, /^FeeClaim at 0x/);
    assert.equal(check(rows, 'decimals usdc')?.detail, '6');
    assert.equal(check(rows, 'clock')?.status, 'ok');
  });

  test('red: a node of another chain, other code at a registry address, an unfunded relayer, a clock far behind', async () => {
    const config = await deployed({ relayer: '1000000000000000' });
    const registry = loadRegistry(config.registryPath);
    const rows = await chainChecks(config, registry, Date.now());
    assert.match(check(rows, 'balance relayer')!.detail, /^0 wei, under the minimum 1000000000000000$/);
    assert.equal(errors(rows).length, 1);
    const behind = await chainChecks(config, registry, Date.now() - 3_600_000);
    assert.match(check(behind, 'clock')!.detail, /ahead of the local clock: set the clock right/);

    // The same registry served by a node of another chain id: only that is said.
    const other = await startAnvil({ chainId: 5 });
    try {
      const wrong = await chainChecks({ ...config, chains: { ethereum_localnet: { rpc_url: other.rpcUrl } } }, registry, Date.now());
      assert.deepEqual(wrong.map((r) => [r.check, r.status, r.detail]), [['chain id', 'error', `the node serves evm:5, the registry names evm:${CHAIN_ID}`]]);
    } finally {
      await other.stop();
    }
    // A deployment file naming the token as the USDC HTLC: other code at a registry address.
    const file = JSON.parse(readFileSync(deploymentPath(config.registryPath), 'utf8')) as { chains: Record<string, { contracts: Array<{ contract: string; address: string }> }> };
    file.chains.ethereum_localnet!.contracts.find((c) => c.contract === 'HTLC')!.address = token;
    writeFileSync(deploymentPath(config.registryPath), JSON.stringify(file));
    const foreign = await chainChecks(config, loadRegistry(config.registryPath), Date.now());
    assert.match(check(foreign, 'code usdc')!.detail, /^the code at 0x[0-9a-fA-F]{40} is not the HTLC artifact's/);
  });

  test('red: the database migrations behind this version; green once migrated', async (t) => {
    const serverUrl = process.env.DATABASE_URL;
    if (!serverUrl) {
      assert.ok(!process.env.CI, 'CI sets DATABASE_URL');
      t.skip('no DATABASE_URL: the PostgreSQL half needs a server');
      return;
    }
    const database = await createDatabase(serverUrl, 'preflight', { migrated: false });
    t.after(() => database.drop());
    const config = { databaseUrl: database.url, dataDir: mkdtempSync(join(tmpdir(), 'hashlock-preflight-')) } as ServiceConfig;
    const store = await openStore({ databaseUrl: database.url, dataDir: config.dataDir, poolSize: 1 });
    try {
      await migrate(store.db, '0002_orders');
    } finally {
      await store.close();
    }
    const behind = await databaseChecks(config);
    assert.match(check(behind, 'migrations')!.detail, /^\d+ migration\(s\) behind \(0003_chain_heights…\): run hashlock migrate/);
    assert.equal(check(behind, 'migrations')!.status, 'error');
    const again = await openStore({ databaseUrl: database.url, dataDir: config.dataDir, poolSize: 1 });
    try {
      await migrate(again.db);
    } finally {
      await again.close();
    }
    assert.deepEqual(errors(await databaseChecks(config)), []);
  });
});
