// Going live as an operator does, on chains that start empty: two plain anvil nodes with no contracts
// and no funded service account. The test plays the faucet (anvil's genesis account) and the token's
// issuer; everything else goes through the `hashlock` command: `keys new` for each role, `deploy`
// (twice: the second deploys nothing), `preflight` (green), then `serve` on PostgreSQL from the key
// files as two instances, `--role workers` and `--role api`, and a client's gasless swap through the API
// instance, every balance checked. The API instance holds no key: none is in its environment or
// config, and it seals to the workers' public key.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, maxUint256, parseEther, type Address, type PublicClient } from 'viem';
import type { RegistryFile } from '../../src/chains/registry-schema.ts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { readDeployment } from '../../src/deploy/deployment-file.ts';
import { decryptKeyFile } from '../../src/keys/key-file.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { freePort } from '../../src/localnet/free-port.ts';
import { createApp } from '../../src/store/apps.ts';
import { openStore } from '../../src/store/database.ts';
import { signGaslessInitiate } from '../helpers/gasless.ts';
import { BIN, runHashlock } from '../helpers/hashlock-cli.ts';
import { createDatabase } from '../helpers/stores.ts';
import { testRegistryFile } from '../helpers/test-registry.ts';
import { skipWithoutPostgres } from './service-process.ts';

const CHAINS = ['ethereum_localnet', 'arbitrum_localnet'] as const;
const ROLES = ['relayer', 'solver', 'fee-signer', 'deployer', 'secret'] as const;
const AMOUNT = 100_000n;

interface EmptyChain {
  key: (typeof CHAINS)[number];
  node: AnvilNode;
  client: PublicClient;
  wbtc: Address;
}

/** A `hashlock serve` process, up once /health answers. */
async function serve(args: string[], env: NodeJS.ProcessEnv, api: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  for (const end = Date.now() + 60_000; !(await fetch(`${api}/health`).then((r) => r.ok, () => false)); await new Promise((r) => setTimeout(r, 100))) {
    if (child.exitCode !== null || Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`hashlock serve ${args.join(' ')} did not start:\n${output}`);
    }
  }
  return { child, output: () => output };
}

const skip = skipWithoutPostgres('the go-live test');

test('go live on empty chains: keys, deploy (twice), preflight, a workers and an API instance on PostgreSQL, a gasless swap through the API instance', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-go-live-'));
  // Undone last first: the instances stop before their database is dropped and their chains stop.
  const cleanup: Array<() => unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  t.after(async () => {
    for (const undo of cleanup.reverse()) await undo();
  });
  const faucet = devAccount('deployer');
  const user = devAccount('user');
  const chains: EmptyChain[] = await Promise.all(
    CHAINS.map(async (key, i) => {
      const node = await startAnvil({ chainId: 31337 + i });
      cleanup.push(() => node.stop());
      const client = createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0 });
      // The token exists before the operator arrives: its issuer (the faucet here) deployed it.
      const issuer = createWalletClient({ account: faucet, transport: http(node.rpcUrl), chain: undefined });
      const { abi, bytecode } = contractArtifact('TestToken');
      const receipt = await client.waitForTransactionReceipt({ hash: await issuer.deployContract({ chain: null, abi, bytecode, args: ['Wrapped Bitcoin (test)', 'WBTC', 8, faucet.address] }) });
      const wbtc = getAddress(receipt.contractAddress!);
      await client.waitForTransactionReceipt({ hash: await issuer.writeContract({ chain: null, address: wbtc, abi, functionName: 'mint', args: [user.address, 10n ** 8n] }) });
      return { key, node, client, wbtc };
    }),
  );

  // The operator's keys, each in its own encrypted file.
  const passwordFile = join(dir, 'password');
  const password = randomBytes(16).toString('hex');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_KEY_PASSWORD_FILE: passwordFile, LOG_LEVEL: 'info' };
  for (const name of ['HASHLOCK_RELAYER_KEY', 'HASHLOCK_SOLVER_KEY', 'HASHLOCK_FEE_SIGNER_KEY', 'HASHLOCK_SECRET_KEY', 'HASHLOCK_DEPLOYER_KEY', 'HASHLOCK_KEY_PASSWORD', 'DATABASE_URL']) delete cliEnv[name];
  const keyFile = (role: string) => join(dir, `${role}.json`);
  await Promise.all(
    ROLES.map(async (role) => {
      const made = await runHashlock(['keys', 'new', '--role', role, '--out', keyFile(role), '--scrypt-n', '1024'], cliEnv);
      assert.equal(made.code, 0, made.stderr);
    }),
  );
  const address = (role: string) => getAddress(`0x${(JSON.parse(readFileSync(keyFile(role), 'utf8')) as { address: string }).address}`);
  const [relayer, solver, deployer] = [address('relayer'), address('solver'), address('deployer')];
  const secrets = ROLES.map((role) => Buffer.from(decryptKeyFile(keyFile(role), password).key).toString('hex'));

  // A faucet pays the relayer, the solver and the deployer; the solver buys its WBTC inventory.
  await Promise.all(
    chains.map(async (c) => {
      const wallet = createWalletClient({ account: faucet, transport: http(c.node.rpcUrl), chain: undefined });
      for (const to of [relayer, solver, deployer]) await c.client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: null, to, value: parseEther('10') }) });
      const { abi } = contractArtifact('TestToken');
      await c.client.waitForTransactionReceipt({ hash: await wallet.writeContract({ chain: null, address: c.wbtc, abi, functionName: 'mint', args: [solver, 10n ** 8n] }) });
    }),
  );

  // The registry of these two chains: their WBTC and ETH, no HTLC address (hashlock deploy's to fill).
  const registry = testRegistryFile();
  registry.chains = registry.chains.filter((c) => (CHAINS as readonly string[]).includes(c.chain));
  for (const chain of registry.chains) {
    chain.assets = chain.assets.filter((a) => a.symbol === 'wbtc' || a.symbol === 'eth');
    for (const asset of chain.assets) {
      asset.htlc.address = '';
      if (asset.symbol === 'wbtc') asset.token.address = chains.find((c) => c.key === chain.chain)!.wbtc;
    }
  }
  const registryPath = join(dir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify(registry satisfies RegistryFile, null, 2));
  const solverId = solver.toLowerCase();
  const config = {
    registry: registryPath,
    log_level: 'info',
    rate_limit: false,
    database_pool_size: 5,
    prices: { bitcoin: 95000, ethereum: 3200 },
    key_files: { relayer: keyFile('relayer'), solver: keyFile('solver'), fee_signer: keyFile('fee-signer'), deployer: keyFile('deployer'), secret: keyFile('secret') },
    chains: Object.fromEntries(chains.map((c) => [c.key, { rpc_url: c.node.rpcUrl, relayer, minimum_balances: { relayer: parseEther('1').toString(), inventory: { wbtc: '1000000' } } }])),
    solvers: [{ id: solverId, name: 'operator solver', addresses: Object.fromEntries(CHAINS.map((key) => [key, solver])) }],
    strategies: [{ solver: solverId, from: CHAINS.map((key) => `${key}:wbtc`), to: CHAINS.map((key) => `${key}:wbtc`), fee_bips: 30 }],
  };
  const configPath = join(dir, 'hashlock.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));

  // Deploy each chain twice: the second run finds every contract and sends nothing.
  for (const c of chains) {
    const first = await runHashlock(['deploy', '--config', configPath, '--chain', c.key], cliEnv);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`${c.key}: 3 deployed, 0 found on chain`));
    const nonce = await c.client.getTransactionCount({ address: deployer });
    const second = await runHashlock(['deploy', '--config', configPath, '--chain', c.key], cliEnv);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`${c.key}: 0 deployed, 3 found on chain`));
    assert.equal(await c.client.getTransactionCount({ address: deployer }), nonce, 'the second deploy sent nothing');
  }
  const deployment = readDeployment(registryPath);
  const wbtcHtlc = (c: EmptyChain) => getAddress(deployment.chains[c.key]!.contracts.find((d) => d.contract === 'HTLC')!.address);

  const database = await createDatabase(process.env.DATABASE_URL!, 'go_live', { migrated: false });
  cleanup.push(() => database.drop());
  const serveEnv: NodeJS.ProcessEnv = { ...cliEnv, DATABASE_URL: database.url, HASHLOCK_DATA_DIR: join(dir, 'data') };
  const migrated = await runHashlock(['migrate', '--config', configPath], serveEnv);
  assert.equal(migrated.code, 0, migrated.stderr);

  const preflight = await runHashlock(['preflight', '--config', configPath, '--json'], serveEnv);
  const report = JSON.parse(preflight.stdout) as { ok: boolean; checks: Array<{ scope: string; check: string; status: string; detail: string }> };
  assert.deepEqual(report.checks.filter((r) => r.status === 'error'), []);
  assert.equal(preflight.code, 0);
  for (const c of chains) {
    for (const check of ['chain id', 'code wbtc', 'code eth', 'code FeeClaim', 'decimals wbtc', 'balance relayer', 'inventory wbtc', 'clock']) {
      assert.ok(report.checks.some((r) => r.scope === c.key && r.check === check && r.status === 'ok'), `${c.key}: ${check}`);
    }
  }

  // The chains now mine a block a second, as a chain does.
  await Promise.all(chains.map((c) => c.node.rpc('evm_setIntervalMining', [1])));
  const workersApi = `http://127.0.0.1:${await freePort()}`;
  const workers = await serve(['--config', configPath, '--role', 'workers'], { ...serveEnv, PORT: new URL(workersApi).port }, workersApi);
  cleanup.push(() => workers.child.kill('SIGKILL'));
  // Its start line, printed once the service is up.
  let sealedTo: string | undefined;
  for (const end = Date.now() + 10_000; !(sealedTo = /secrets are sealed to ([0-9a-f]{64})/.exec(workers.output())?.[1]); await new Promise((r) => setTimeout(r, 50))) {
    assert.ok(Date.now() < end, workers.output());
  }
  assert.equal((await fetch(`${workersApi}/v2/quote?from=x&to=y&from_amount=1`)).status, 404, 'the workers instance answers no client');

  // The API instance: no key file, no key variable, no password; it seals to the workers' key.
  const apiConfigPath = join(dir, 'hashlock.api.json');
  const { key_files: _keyFiles, ...withoutKeys } = config;
  writeFileSync(apiConfigPath, JSON.stringify({ ...withoutKeys, secret_public_key: sealedTo }, null, 2));
  const apiEnv: NodeJS.ProcessEnv = { ...serveEnv };
  delete apiEnv.HASHLOCK_KEY_PASSWORD_FILE;
  const api = `http://127.0.0.1:${await freePort()}`;
  const apiInstance = await serve(['--config', apiConfigPath, '--role', 'api'], { ...apiEnv, PORT: new URL(api).port }, api);
  cleanup.push(() => apiInstance.child.kill('SIGKILL'));

  const store = await openStore({ databaseUrl: database.url });
  const { key: appKey } = await createApp(store.db, { name: 'go-live client', gasless: true });
  await store.close();
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${api}${path}`, { method, headers: { 'service-app-id': appKey, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };

  // The client approves the new HTLC once, then swaps WBTC gasless from one chain to the other.
  const [source, destination] = chains as [EmptyChain, EmptyChain];
  const userWallet = createWalletClient({ account: user, transport: http(source.node.rpcUrl), chain: undefined });
  await source.client.waitForTransactionReceipt({ hash: await userWallet.writeContract({ chain: null, address: source.wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc(source), maxUint256] }) });
  const balance = (c: EmptyChain, who: Address) => c.client.readContract({ address: c.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
  const before = { user: [await balance(source, user.address), await balance(destination, user.address)], solver: [await balance(source, solver), await balance(destination, solver)] };

  const quotePath = `/v2/quote?from=${source.key}:wbtc&to=${destination.key}:wbtc&from_amount=${AMOUNT}`;
  let quote = await call('GET', quotePath);
  // The workers read the solver's balances every 5 s: until their first read, there is no liquidity.
  for (const end = Date.now() + 30_000; quote.status !== 200 && Date.now() < end; quote = await call('GET', quotePath)) await new Promise((r) => setTimeout(r, 500));
  assert.equal(quote.status, 200, JSON.stringify(quote.body));
  const destinationAmount = BigInt(quote.body.result[0].destination.amount as string);
  const created = await call('POST', '/v2/orders', {
    source: { asset: `${source.key}:wbtc`, owner: user.address, amount: AMOUNT.toString() },
    destination: { asset: `${destination.key}:wbtc`, owner: user.address, amount: destinationAmount.toString() },
    nonce: randomBytes(10).toString('hex'),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const orderId = created.body.result.order_id as string;
  const initiated = await call('PATCH', `/v2/orders/${orderId}?action=initiate`, { signature: await signGaslessInitiate(user, created.body.result.typed_data) });
  assert.ok(initiated.status < 300, JSON.stringify(initiated.body));

  let status = '';
  for (const end = Date.now() + 90_000; status !== 'completed'; await new Promise((r) => setTimeout(r, 500))) {
    status = (await call('GET', `/v2/orders/${orderId}`)).body.result.status as string;
    assert.ok(Date.now() < end, `the order is ${status}\n--- workers:\n${workers.output().slice(-5000)}\n--- api:\n${apiInstance.output().slice(-3000)}`);
  }
  assert.equal(before.user[0]! - (await balance(source, user.address)), AMOUNT, 'the user paid the source');
  assert.equal((await balance(destination, user.address)) - before.user[1]!, destinationAmount, 'the user received the destination');
  assert.equal((await balance(source, solver)) - before.solver[0]!, AMOUNT, "the operator's solver received the source");
  assert.equal(before.solver[1]! - (await balance(destination, solver)), destinationAmount, "the operator's solver paid the destination");

  // Rule 7 on both instances, and the API instance never held a key.
  for (const [name, output] of [['workers', workers.output()], ['api', apiInstance.output()]] as const) {
    for (const hidden of [...secrets, password]) assert.ok(!output.toLowerCase().includes(hidden), `${name}: a key or the password is in its output`);
    assert.doesNotMatch(output, /plaintext key/);
  }
  assert.doesNotMatch(apiInstance.output(), /secrets are sealed to/);
});
