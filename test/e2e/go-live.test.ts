// Going live as an operator does, on chains that start empty: two plain anvil nodes, a plain Litecoin
// Core regtest node, the local Solana chain with no programs and the local Tron chain with no contracts,
// none with a funded service account. The test plays the faucets (each chain's genesis coins) and the
// tokens' issuers; everything else goes through the `hashlock` command: `keys new` for each role,
// `keys addresses` (the relayer's and solver's party on each chain, and where to fund them), `deploy`
// on each chain with contracts (twice: the second deploys nothing), `migrate`, `preflight`
// (green), then `serve` on PostgreSQL from the key files as two instances, `--role workers` and `--role
// api`, and a client's swaps through the API instance, all at once: WBTC gasless between the anvils,
// LTC -> WBTC and WBTC -> LTC, SOL -> WBTC, Tron USDT gasless -> WBTC, every balance checked. The API
// instance holds no key: none is in its environment or config, and it seals to the workers' public key;
// the WBTC -> LTC client keeps its secret and redeems through it, the workers signing that redeem.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hexToBytes } from '@noble/curves/utils.js';
import { generateKeyPairSigner, lamports, type Address as SolanaAddress } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { getInitializeMint2Instruction, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  maxUint256,
  numberToHex,
  parseEther,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { sign } from 'viem/accounts';
import { satoshis } from '../../src/chains/bitcoin/chain-data.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import type { RegistryFile } from '../../src/chains/registry-schema.ts';
import { solanaAddressOfKey, solanaSignerOfKey } from '../../src/chains/solana/keys.ts';
import { solanaRpc } from '../../src/chains/solana/rpc.ts';
import { signAndSend, solanaTxEffect, type SolanaWallet } from '../../src/chains/solana/swap-wallet.ts';
import { loadArtifact } from '../../src/chains/solidity-htlc/artifacts.ts';
import { evmHexToTron } from '../../src/chains/tron/address.ts';
import { TronApi } from '../../src/chains/tron/api.ts';
import { TronHtlcReader } from '../../src/chains/tron/htlc-reads.ts';
import type { TronCall } from '../../src/chains/tron/jobs.ts';
import { hex41, signTronCall } from '../../src/chains/tron/transactions.ts';
import { readDeployment } from '../../src/deploy/deployment-file.ts';
import { decryptKeyFile } from '../../src/keys/key-file.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { startLitecoind, type LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { freePort } from '../../src/localnet/free-port.ts';
import { startSolanaLocalnet, type SolanaLocalnet } from '../../src/localnet/solana/chain/index.ts';
import { WEI_PER_SUN } from '../../src/localnet/tron/chain.ts';
import { startTronLocalnet, type TronLocalnet } from '../../src/localnet/tron/local-chain.ts';
import { createApp } from '../../src/store/apps.ts';
import { openStore } from '../../src/store/database.ts';
import { signGaslessInitiate } from '../helpers/gasless.ts';
import { BIN, runHashlock } from '../helpers/hashlock-cli.ts';
import { confirmedBalance, toCoins } from '../helpers/litecoin.ts';
import { fundedSigner, localnetRpc, sendWire, signedTransaction } from '../helpers/solana-localnet.ts';
import { createDatabase } from '../helpers/stores.ts';
import { testRegistryFile } from '../helpers/test-registry.ts';
import { until } from '../helpers/wait.ts';
import { familiesMissing } from './service-chains.ts';
import { skipWithoutPostgres } from './service-process.ts';

const CHAINS = ['ethereum_localnet', 'arbitrum_localnet'] as const;
const ROLES = ['relayer', 'solver', 'fee-signer', 'deployer', 'secret'] as const;
/** WBTC of each swap from an EVM chain. */
const AMOUNT = 100_000n;
const LTC = 100_000_000n;
const SOL = 1_000_000_000n;
const TRX = 1_000_000n;
const USDT_AMOUNT = 10_000_000n;
const LTC_CHAIN = 'litecoin_localnet';
const SOL_CHAIN = 'solana_localnet';
const TRON_CHAIN = 'tron_localnet';

interface EmptyChain {
  key: (typeof CHAINS)[number];
  node: AnvilNode;
  client: PublicClient;
  wbtc: Address;
}

/** The parts of a Litecoin Core transaction these checks read. */
interface LtcTx {
  confirmations?: number;
  vin: Array<{ txid: string; vout: number }>;
  // Litecoin Core 0.21 names an output's address in `addresses`; later versions in `address`.
  vout: Array<{ value: number; scriptPubKey: { address?: string; addresses?: string[] } }>;
}

/** A mined Litecoin transaction as payments: what each input spent and each output paid, by address. */
interface LtcTransfer {
  inputs: Array<{ address: string | undefined; value: bigint }>;
  outputs: Array<{ address: string | undefined; value: bigint }>;
}

const sum = (values: Array<{ value: bigint }>) => values.reduce((total, v) => total + v.value, 0n);
const feeOf = (t: LtcTransfer) => sum(t.inputs) - sum(t.outputs);
/** What `address` gained (or, negative, paid) in `t`. */
const netTo = (t: LtcTransfer, address: string) => sum(t.outputs.filter((o) => o.address === address)) - sum(t.inputs.filter((i) => i.address === address));

interface Order {
  order_id: string;
  status: string;
  source_swap: { swap_id: string; initiate_tx_hash: string; redeem_tx_hash: string; secret: string };
  destination_swap: { swap_id: string; initiate_tx_hash: string; redeem_tx_hash: string; secret: string };
}

/** One balance change a swap makes: the balance (by name in the test's ledger), by how much, and why. */
type Delta = [balance: string, amount: bigint, why: string];

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

const missing = skipWithoutPostgres('the go-live test') || (await familiesMissing());
if (missing && !/DATABASE_URL/.test(missing)) console.warn(`\n*** SKIPPING the go-live test: ${missing} ***\n`);
const skip = missing || false;

test('go live on empty chains: keys, deploy (twice), preflight, a workers and an API instance on PostgreSQL, swaps on every family through the API instance', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-go-live-'));
  // Undone last first: the instances stop before their database is dropped and their chains stop.
  const cleanup: Array<() => unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  t.after(async () => {
    for (const undo of cleanup.reverse()) await undo();
  });
  const faucet = devAccount('deployer');
  const user = devAccount('user');
  const userKey = privateKeyOf(user);
  const testChains = testRegistryFile().chains;
  const testChain = (key: string) => testChains.find((c) => c.chain === key)!;
  const ltcNetwork = testChain(LTC_CHAIN).network!;
  const userLtc = walletAddress(hexToBytes(userKey.slice(2)), ltcNetwork);
  const userTron = evmHexToTron(user.address);

  /** An empty anvil whose WBTC its issuer (the faucet here) deployed before the operator arrives. */
  const startEvm = async (key: (typeof CHAINS)[number], i: number): Promise<EmptyChain> => {
    const node = await startAnvil({ chainId: 31337 + i });
    cleanup.push(() => node.stop());
    const client = createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0 });
    const issuer = createWalletClient({ account: faucet, transport: http(node.rpcUrl), chain: undefined });
    const { abi, bytecode } = contractArtifact('TestToken');
    const receipt = await client.waitForTransactionReceipt({ hash: await issuer.deployContract({ chain: null, abi, bytecode, args: ['Wrapped Bitcoin (test)', 'WBTC', 8, faucet.address] }) });
    const wbtc = getAddress(receipt.contractAddress!);
    await client.waitForTransactionReceipt({ hash: await issuer.writeContract({ chain: null, address: wbtc, abi, functionName: 'mint', args: [user.address, 10n ** 8n] }) });
    return { key, node, client, wbtc };
  };
  /** A plain regtest node, mining a block every registry block time from now on, as a chain does. */
  const startLitecoin = async (): Promise<LitecoinNode> => {
    const node = await startLitecoind();
    let mining: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      mining = node.mine(1).catch(() => undefined);
    }, testChain(LTC_CHAIN).block_time_ms);
    cleanup.push(async () => {
      clearInterval(timer);
      await mining;
      await node.stop();
    });
    return node;
  };
  /** The local Solana chain with no program, the user's SOL from its faucet, and a USDC mint its issuer created. */
  const startSolana = async (): Promise<{ chain: SolanaLocalnet; usdc: SolanaAddress }> => {
    const chain = await startSolanaLocalnet({ slotMs: testChain(SOL_CHAIN).block_time_ms });
    cleanup.push(() => chain.stop());
    const rpc = localnetRpc(chain.rpcUrl);
    await rpc.requestAirdrop((await solanaSignerOfKey(userKey)).address, lamports(10n * SOL)).send();
    const issuer = await fundedSigner(rpc);
    const mint = await generateKeyPairSigner();
    const space = BigInt(getMintSize());
    const rent = await rpc.getMinimumBalanceForRentExemption(space).send();
    const created = await signedTransaction(rpc, issuer, [
      getCreateAccountInstruction({ payer: issuer, newAccount: mint, lamports: rent, space, programAddress: TOKEN_PROGRAM_ADDRESS }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: issuer.address }),
    ]);
    await sendWire(rpc, created.wire);
    return { chain, usdc: mint.address };
  };
  /** The local Tron chain with no contract; its USDT created by its issuer (a genesis account), who gives the user some. */
  const startTron = async (): Promise<{ chain: TronLocalnet; api: TronApi; usdt: string }> => {
    const chain = await startTronLocalnet({ blockTimeMs: testChain(TRON_CHAIN).block_time_ms, solidifyDepth: testChain(TRON_CHAIN).confirmation_target });
    cleanup.push(() => chain.stop());
    const api = new TronApi(chain.url);
    const issuer = evmHexToTron(faucet.address);
    const signed = async (tx: { txID: string }) => ({ ...tx, signature: [(await sign({ hash: `0x${tx.txID}`, privateKey: privateKeyOf(faucet), to: 'hex' })).slice(2)] });
    const landed = async (txId: string) => {
      const info = await until(`Tron transaction ${txId} to land`, () => api.transactionInfo(txId), 30_000, 100);
      assert.equal(info.failed, false, `Tron transaction ${txId}: ${info.result} ${info.message ?? ''}`);
      return info;
    };
    const token = loadArtifact('tron', 'TestToken');
    const creation = await api.post<{ txID: string; contract_address: string }>('wallet/deploycontract', {
      owner_address: hex41(issuer),
      abi: JSON.stringify(token.abi),
      bytecode: token.bytecode.slice(2),
      parameter: encodeAbiParameters([{ type: 'string' }, { type: 'string' }, { type: 'uint8' }, { type: 'address' }], ['Tether USD (test)', 'USDT', 6, faucet.address]).slice(2),
      fee_limit: 1_000_000_000,
      consume_user_resource_percent: 100,
      origin_energy_limit: 10_000_000,
      name: 'TestToken',
    });
    assert.deepEqual(await api.broadcast(await signed(creation)), { result: true });
    await landed(creation.txID);
    const usdt = evmHexToTron(`0x${creation.contract_address.slice(2)}`);
    const head = await api.nowBlock();
    const mint = await signTronCall({
      call: { contract: usdt, data: encodeFunctionData({ abi: contractArtifact('TestToken').abi, functionName: 'mint', args: [user.address, 1_000n * 10n ** 6n] }) },
      owner: issuer,
      privateKey: privateKeyOf(faucet),
      reference: head,
      expiration: head.timestampMs + 60_000,
      feeLimitSun: 150_000_000n,
    });
    assert.equal((await api.broadcast(mint as unknown as Record<string, unknown>)).result, true);
    await landed(mint.txID);
    return { chain, api, usdt };
  };

  // The operator's keys, each in its own encrypted file; on Solana the deployer is an ed25519 key.
  const passwordFile = join(dir, 'password');
  const password = randomBytes(16).toString('hex');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, HASHLOCK_KEY_PASSWORD_FILE: passwordFile, LOG_LEVEL: 'info' };
  for (const name of ['HASHLOCK_RELAYER_KEY', 'HASHLOCK_SOLVER_KEY', 'HASHLOCK_FEE_SIGNER_KEY', 'HASHLOCK_SECRET_KEY', 'HASHLOCK_DEPLOYER_KEY', 'HASHLOCK_KEY_PASSWORD', 'DATABASE_URL']) delete cliEnv[name];
  const keyFile = (role: string) => join(dir, `${role}.json`);
  const newKey = async (role: string, file: string, curve: string[] = []) => {
    const made = await runHashlock(['keys', 'new', '--role', role, ...curve, '--out', keyFile(file), '--scrypt-n', '1024'], cliEnv);
    assert.equal(made.code, 0, made.stderr);
  };

  // Every chain and every key at once; a chain that failed to start fails the test once all have settled, so cleanup knows every node.
  const settled = await Promise.allSettled([
    Promise.all(CHAINS.map(startEvm)),
    startLitecoin(),
    startSolana(),
    startTron(),
    Promise.all([...ROLES.map((role) => newKey(role, role)), newKey('deployer', 'deployer-solana', ['--curve', 'ed25519'])]),
  ] as const);
  const value = <T,>(outcome: PromiseSettledResult<T>): T => {
    if (outcome.status === 'rejected') throw outcome.reason;
    return outcome.value;
  };
  const [chains, ltc, solana, tron] = [value(settled[0]), value(settled[1]), value(settled[2]), value(settled[3])];
  value(settled[4]);

  const fileAddress = (file: string) => (JSON.parse(readFileSync(keyFile(file), 'utf8')) as { address: string }).address;
  const deployer = getAddress(`0x${fileAddress('deployer')}`);
  const deployerTron = evmHexToTron(deployer);
  const solanaDeployer = fileAddress('deployer-solana') as SolanaAddress;
  const secrets = [...ROLES, 'deployer-solana'].map((file) => Buffer.from(decryptKeyFile(keyFile(file), password).key).toString('hex'));

  // The registry of these chains with no HTLC address (hashlock deploy's to fill): WBTC and ETH on
  // the anvils, LTC, SOL and the USDC mint on Solana (one asset per program), Tron's USDT.
  const registry = testRegistryFile();
  registry.chains = registry.chains.filter((c) => [...CHAINS, LTC_CHAIN, SOL_CHAIN, TRON_CHAIN].includes(c.chain));
  for (const chain of registry.chains) {
    if (chain.chain === SOL_CHAIN) chain.assets = chain.assets.filter((a) => a.symbol !== 'cbbtc');
    if ((CHAINS as readonly string[]).includes(chain.chain)) chain.assets = chain.assets.filter((a) => a.symbol === 'wbtc' || a.symbol === 'eth');
    for (const asset of chain.assets) {
      asset.htlc.address = '';
      if (asset.symbol === 'wbtc') asset.token.address = chains.find((c) => c.key === chain.chain)!.wbtc;
      if (chain.chain === SOL_CHAIN && asset.symbol === 'usdc') asset.token.address = solana.usdc;
      if (chain.chain === TRON_CHAIN) asset.token.address = tron.usdt;
    }
  }
  const registryPath = join(dir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify(registry satisfies RegistryFile, null, 2));
  const configPath = join(dir, 'hashlock.json');
  const baseConfig = {
    registry: registryPath,
    log_level: 'info',
    rate_limit: false,
    database_pool_size: 5,
    prices: { bitcoin: 95000, ethereum: 3200, litecoin: 90, solana: 150, tether: 1, 'usd-coin': 1 },
    key_files: { relayer: keyFile('relayer'), solver: keyFile('solver'), fee_signer: keyFile('fee-signer'), deployer: keyFile('deployer'), secret: keyFile('secret') },
  };
  writeFileSync(configPath, JSON.stringify(baseConfig, null, 2));
  // What the relayer and solver keys are on each chain: their party (solvers[].addresses, chains.<key>.relayer) and where to fund them.
  const keyAddresses = async (role: 'relayer' | 'solver') => {
    const listed = await runHashlock(['keys', 'addresses', '--config', configPath, '--role', role], cliEnv);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = listed.stdout.trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/));
    const byChain = new Map(rows.map(([chain, party, fund]) => [chain!, { party: party!, fund: fund! }]));
    return (chain: string) => byChain.get(chain) ?? assert.fail(`hashlock keys addresses --role ${role} names no ${chain}:\n${listed.stdout}`);
  };
  const [relayerOn, solverOn] = await Promise.all([keyAddresses('relayer'), keyAddresses('solver')]);
  const [relayer, solver] = [getAddress(relayerOn(CHAINS[0]).party), getAddress(solverOn(CHAINS[0]).party)];
  assert.deepEqual([relayer, solver], [getAddress(`0x${fileAddress('relayer')}`), getAddress(`0x${fileAddress('solver')}`)], 'the key files name the same EVM addresses');
  const solverLtc = solverOn(LTC_CHAIN).fund;
  const [solverSol, relayerSol] = [solverOn(SOL_CHAIN).party as SolanaAddress, relayerOn(SOL_CHAIN).party as SolanaAddress];
  const [solverTron, relayerTron] = [solverOn(TRON_CHAIN).party, relayerOn(TRON_CHAIN).party];

  // The faucets pay the relayer, the solver and the deployers; the solver buys its WBTC inventory.
  const solRpc = localnetRpc(solana.chain.rpcUrl);
  await Promise.all([
    ...chains.map(async (c) => {
      const wallet = createWalletClient({ account: faucet, transport: http(c.node.rpcUrl), chain: undefined });
      for (const to of [relayer, solver, deployer]) await c.client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: null, to, value: parseEther('10') }) });
      const { abi } = contractArtifact('TestToken');
      await c.client.waitForTransactionReceipt({ hash: await wallet.writeContract({ chain: null, address: c.wbtc, abi, functionName: 'mint', args: [solver, 10n ** 8n] }) });
    }),
    // The solver's Litecoin goes to its key's wallet address, confirmed (the node's own wallet is the faucet).
    (async () => {
      await ltc.rpc.call('sendtoaddress', [solverLtc, toCoins(10n * LTC)]);
      await until("the solver's LTC to confirm", async () => ((await confirmedBalance(ltc, solverLtc)) === 10n * LTC ? true : undefined), 30_000, 200);
    })(),
    ...[[solanaDeployer, 20n], [relayerSol, 10n], [solverSol, 10n]].map(([to, sol]) => solRpc.requestAirdrop(to as SolanaAddress, lamports((sol as bigint) * SOL)).send()),
    // Tron's faucet is a genesis account, paying through the node under the local chain (its HTTP API takes no TRX transfer).
    (async () => {
      for (const to of [deployer, relayer, solver]) await tron.chain.chain.anvil.rpc('eth_sendTransaction', [{ from: faucet.address, to, value: numberToHex(1_000n * TRX * WEI_PER_SUN) }]);
      await tron.chain.mine();
    })(),
  ]);

  const solverId = solver.toLowerCase();
  const wbtcOf = (...keys: string[]) => keys.map((key) => `${key}:wbtc`);
  const config = {
    ...baseConfig,
    chains: {
      ...Object.fromEntries(chains.map((c) => [c.key, { rpc_url: c.node.rpcUrl, relayer: relayerOn(c.key).party, minimum_balances: { relayer: parseEther('1').toString(), inventory: { wbtc: '1000000' } } }])),
      [LTC_CHAIN]: { rpc_url: ltc.rpcUrl, rpc_cookie_file: ltc.cookieFile, minimum_balances: { solver: LTC.toString() } },
      [SOL_CHAIN]: { rpc_url: solana.chain.rpcUrl, relayer: relayerSol, minimum_balances: { relayer: SOL.toString(), solver: SOL.toString() } },
      [TRON_CHAIN]: { rpc_url: tron.chain.url, relayer: relayerTron, minimum_balances: { relayer: (100n * TRX).toString(), solver: (100n * TRX).toString() } },
    },
    solvers: [{ id: solverId, name: 'operator solver', addresses: Object.fromEntries([...CHAINS, LTC_CHAIN, SOL_CHAIN, TRON_CHAIN].map((key) => [key, solverOn(key).party])) }],
    strategies: [
      { solver: solverId, from: wbtcOf(...CHAINS), to: wbtcOf(...CHAINS), fee_bips: 30 },
      { solver: solverId, from: `${LTC_CHAIN}:ltc`, to: wbtcOf('arbitrum_localnet'), fee_bips: 30 },
      { solver: solverId, from: wbtcOf('ethereum_localnet'), to: `${LTC_CHAIN}:ltc`, fee_bips: 30 },
      { solver: solverId, from: `${SOL_CHAIN}:sol`, to: wbtcOf('arbitrum_localnet'), fee_bips: 30 },
      { solver: solverId, from: `${TRON_CHAIN}:usdt`, to: wbtcOf('ethereum_localnet'), fee_bips: 30 },
    ],
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));

  // The database meanwhile: nothing in it depends on the contracts.
  const databaseReady = (async () => {
    const database = await createDatabase(process.env.DATABASE_URL!, 'go_live', { migrated: false });
    cleanup.push(() => database.drop());
    const migrated = await runHashlock(['migrate', '--config', configPath], { ...cliEnv, DATABASE_URL: database.url });
    assert.equal(migrated.code, 0, migrated.stderr);
    return database;
  })();
  databaseReady.catch(() => undefined);

  // Deploy each chain with contracts twice: the second run finds every contract and sends nothing. The
  // chains at once, as an operator's shell loop in parallel would: the deployment file is locked while
  // each run writes it. Solana's deployer is an ed25519 key, passed as --key-file.
  const solanaLamports = async (of: SolanaAddress) => (await solRpc.getBalance(of, { commitment: 'confirmed' }).send()).value;
  const deploys = [
    ...chains.map((c) => ({ key: c.key, extra: [] as string[], contracts: 3, spent: () => c.client.getTransactionCount({ address: deployer }).then(BigInt) })),
    { key: SOL_CHAIN, extra: ['--key-file', keyFile('deployer-solana')], contracts: 2, spent: () => solanaLamports(solanaDeployer) },
    { key: TRON_CHAIN, extra: [] as string[], contracts: 1, spent: () => tron.api.balanceSun(hex41(deployerTron)) },
  ];
  const wrongCurve = await runHashlock(['deploy', '--config', configPath, '--chain', SOL_CHAIN], cliEnv);
  assert.equal(wrongCurve.code, 2, wrongCurve.stdout);
  assert.match(wrongCurve.stderr, /key_files\.deployer: .* holds a secp256k1 key; solana chains are deployed with a ed25519 key/);
  await Promise.all(
    deploys.map(async (d) => {
      const first = await runHashlock(['deploy', '--config', configPath, '--chain', d.key, ...d.extra], cliEnv);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, new RegExp(`${d.key}: ${d.contracts} deployed, 0 found on chain`));
      const before = await d.spent();
      const second = await runHashlock(['deploy', '--config', configPath, '--chain', d.key, ...d.extra], cliEnv);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, new RegExp(`${d.key}: 0 deployed, ${d.contracts} found on chain`));
      assert.equal(await d.spent(), before, `${d.key}: the second deploy sent nothing`);
    }),
  );
  const deployment = readDeployment(registryPath);
  const wbtcHtlc = (c: EmptyChain) => getAddress(deployment.chains[c.key]!.contracts.find((d) => d.contract === 'HTLC')!.address);
  const solanaPrograms = deployment.chains[SOL_CHAIN]!.contracts;
  assert.deepEqual(solanaPrograms.map((p) => p.contract).sort(), ['native_swaps', 'spl_swaps']);
  assert.equal(deployment.chains[SOL_CHAIN]!.deployer, solanaDeployer);
  const usdtHtlc = deployment.chains[TRON_CHAIN]!.contracts.find((d) => d.contract === 'TronHTLC')!.address;

  const database = await databaseReady;
  const serveEnv: NodeJS.ProcessEnv = { ...cliEnv, DATABASE_URL: database.url, HASHLOCK_DATA_DIR: join(dir, 'data') };
  const preflight = await runHashlock(['preflight', '--config', configPath, '--json'], serveEnv);
  const report = JSON.parse(preflight.stdout) as { ok: boolean; checks: Array<{ scope: string; check: string; status: string; detail: string }> };
  assert.deepEqual(report.checks.filter((r) => r.status === 'error'), []);
  assert.equal(preflight.code, 0);
  const expectedChecks: Record<string, string[]> = {
    ...Object.fromEntries(CHAINS.map((key) => [key, ['chain id', 'code wbtc', 'code eth', 'code FeeClaim', 'decimals wbtc', 'balance relayer', 'inventory wbtc', 'clock', `solver address ${solverId}`]])),
    [LTC_CHAIN]: ['chain id', 'clock', 'balance solver', `solver address ${solverId}`],
    [SOL_CHAIN]: ['chain id', 'code sol', 'code usdc', 'decimals usdc', 'balance relayer', 'balance solver', 'clock', `solver address ${solverId}`],
    [TRON_CHAIN]: ['chain id', 'code usdt', 'decimals usdt', 'balance relayer', 'balance solver', 'clock', `solver address ${solverId}`],
  };
  for (const [scope, checks] of Object.entries(expectedChecks)) {
    for (const check of checks) assert.ok(report.checks.some((r) => r.scope === scope && r.check === check && r.status === 'ok'), `${scope}: ${check}`);
  }

  // The anvils now mine a block a second, as a chain does (the other chains have since they started).
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
  const logs = () => `\n--- workers:\n${workers.output().slice(-6000)}\n--- api:\n${apiInstance.output().slice(-3000)}`;

  /** The client's order of `amount` from one asset to another, at the quote's destination amount. */
  const createOrder = async (from: { asset: string; owner: string }, to: { asset: string; owner: string }, amount: bigint, extra: object = {}) => {
    const quotePath = `/v2/quote?from=${from.asset}&to=${to.asset}&from_amount=${amount}`;
    let quote = await call('GET', quotePath);
    // The workers read the solver's balances every 5 s (a Litecoin wallet's once its watcher recorded
    // its outputs): until their first read, there is no liquidity.
    for (const end = Date.now() + 30_000; quote.status !== 200 && Date.now() < end; quote = await call('GET', quotePath)) await new Promise((r) => setTimeout(r, 500));
    assert.equal(quote.status, 200, `${quotePath}: ${JSON.stringify(quote.body)}`);
    const receive = BigInt(quote.body.result[0].destination.amount as string);
    const created = await call('POST', '/v2/orders', {
      source: { ...from, amount: amount.toString() },
      destination: { ...to, amount: receive.toString() },
      nonce: randomBytes(10).toString('hex'),
      ...extra,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { id: created.body.result.order_id as string, result: created.body.result, receive };
  };
  const completed = async (id: string): Promise<Order> => {
    let order: Order | undefined;
    for (const end = Date.now() + 120_000; order?.status !== 'completed'; await new Promise((r) => setTimeout(r, 500))) {
      order = (await call('GET', `/v2/orders/${id}`)).body.result as Order;
      assert.ok(Date.now() < end, `the order is ${JSON.stringify(order)}${logs()}`);
    }
    return order;
  };
  const patchInitiate = async (id: string, typedData: Parameters<typeof signGaslessInitiate>[1]) => {
    const initiated = await call('PATCH', `/v2/orders/${id}?action=initiate`, { signature: await signGaslessInitiate(user, typedData) });
    assert.ok(initiated.status < 300, JSON.stringify(initiated.body));
  };
  const ltcTransfer = async (txid: string): Promise<LtcTransfer> => {
    const tx = await until(`${txid} to be mined`, async () => {
      const found = await ltc.rpc.call<LtcTx>('getrawtransaction', [txid, true]);
      return (found.confirmations ?? 0) >= 1 ? found : undefined;
    }, 30_000, 200);
    const addressOf = (o: LtcTx['vout'][number]) => o.scriptPubKey.address ?? o.scriptPubKey.addresses?.[0];
    const inputs = await Promise.all(
      tx.vin.map(async (i) => {
        const spent = (await ltc.rpc.call<LtcTx>('getrawtransaction', [i.txid, true])).vout[i.vout]!;
        return { address: addressOf(spent), value: satoshis(spent.value) };
      }),
    );
    return { inputs, outputs: tx.vout.map((o) => ({ address: addressOf(o), value: satoshis(o.value) })) };
  };

  // Every balance the swaps move, read before they start and after they all end.
  const [source, destination] = chains as [EmptyChain, EmptyChain];
  const tronReader = new TronHtlcReader(tron.api);
  const userSolana: SolanaWallet = { chainKey: SOL_CHAIN, address: solanaAddressOfKey(userKey), signer: solanaSignerOfKey(userKey), rpc: solanaRpc(solana.chain.rpcUrl) };
  const wbtcBalance = (c: EmptyChain, who: Address) => () => c.client.readContract({ address: c.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
  const balances: Record<string, () => Promise<bigint>> = {
    ...Object.fromEntries(
      chains.flatMap((c) => [
        [`${c.key} WBTC user`, wbtcBalance(c, user.address)],
        [`${c.key} WBTC solver`, wbtcBalance(c, solver)],
        [`${c.key} WBTC HTLC`, wbtcBalance(c, wbtcHtlc(c))],
      ]),
    ),
    'litecoin user': () => confirmedBalance(ltc, userLtc),
    'litecoin solver': () => confirmedBalance(ltc, solverLtc),
    'solana SOL user': () => solanaLamports(userSolana.address),
    'solana SOL solver': () => solanaLamports(solverSol),
    'solana SOL relayer': () => solanaLamports(relayerSol),
    'tron USDT user': () => tronReader.trc20Balance(tron.usdt, userTron),
    'tron USDT solver': () => tronReader.trc20Balance(tron.usdt, solverTron),
    'tron USDT HTLC': () => tronReader.trc20Balance(tron.usdt, usdtHtlc),
    'tron TRX user': () => tron.api.balanceSun(hex41(userTron)),
    'tron TRX solver': () => tron.api.balanceSun(hex41(solverTron)),
    'tron TRX relayer': () => tron.api.balanceSun(hex41(relayerTron)),
  };
  const readBalances = async () => Object.fromEntries(await Promise.all(Object.entries(balances).map(async ([name, read]) => [name, await read()] as const)));

  // The client approves the new WBTC HTLC once; the workers approve the solver's tokens to the new HTLCs at start (the TRX it burns is not a swap's).
  const userWallet = createWalletClient({ account: user, transport: http(source.node.rpcUrl), chain: undefined });
  await source.client.waitForTransactionReceipt({ hash: await userWallet.writeContract({ chain: null, address: source.wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc(source), maxUint256] }) });
  await until("the solver's approval of the Tron HTLC", async () => ((await tronReader.allowance(tron.usdt, solverTron, usdtHtlc)) > 0n ? true : undefined), 60_000, 200);
  const before = await readBalances();

  /** WBTC gasless from one anvil to the other. */
  const evmSwap = async (): Promise<{ order: Order; deltas: Delta[] }> => {
    const o = await createOrder({ asset: `${source.key}:wbtc`, owner: user.address }, { asset: `${destination.key}:wbtc`, owner: user.address }, AMOUNT);
    await patchInitiate(o.id, o.result.typed_data);
    const order = await completed(o.id);
    const why = 'WBTC -> WBTC';
    return {
      order,
      deltas: [
        [`${source.key} WBTC user`, -AMOUNT, `${why}: the user paid the source`],
        [`${source.key} WBTC solver`, AMOUNT, `${why}: the solver redeemed the source`],
        [`${destination.key} WBTC user`, o.receive, `${why}: the user received the destination`],
        [`${destination.key} WBTC solver`, -o.receive, `${why}: the solver paid the destination`],
      ],
    };
  };

  /** LTC paid to the order's HTLC address from the client's own wallet (the node's), for WBTC on arbitrum. */
  const ltcToEvm = async (): Promise<{ order: Order; deltas: Delta[] }> => {
    const o = await createOrder({ asset: `${LTC_CHAIN}:ltc`, owner: userLtc }, { asset: `${destination.key}:wbtc`, owner: user.address }, LTC);
    const htlc = o.result.to as string;
    await ltc.rpc.call('sendtoaddress', [htlc, toCoins(LTC)]);
    const order = await completed(o.id);
    assert.equal(order.source_swap.swap_id, htlc);
    const initiate = await ltcTransfer(order.source_swap.initiate_tx_hash);
    assert.equal(netTo(initiate, htlc), LTC, 'LTC -> WBTC: the client paid the HTLC the amount');
    const redeem = await ltcTransfer(order.source_swap.redeem_tx_hash);
    assert.deepEqual([sum(redeem.inputs), redeem.inputs.every((i) => i.address === htlc)], [LTC, true], "LTC -> WBTC: the solver's redeem spends the HTLC");
    assert.ok(redeem.outputs.every((out) => out.address === solverLtc), "LTC -> WBTC: the redeem pays the solver's wallet alone");
    assert.ok(feeOf(redeem) > 0n && feeOf(redeem) < 100_000n, `LTC -> WBTC: the redeem paid a fee: ${feeOf(redeem)}`);
    assert.equal(await confirmedBalance(ltc, htlc), 0n, 'LTC -> WBTC: nothing left in the HTLC');
    const why = 'LTC -> WBTC';
    return {
      order,
      deltas: [
        ['litecoin solver', LTC - feeOf(redeem), `${why}: the solver redeemed the source, less its redeem's fee`],
        [`${destination.key} WBTC user`, o.receive, `${why}: the user received the destination`],
        [`${destination.key} WBTC solver`, -o.receive, `${why}: the solver paid the destination`],
      ],
    };
  };

  /**
   * WBTC gasless on ethereum for LTC; the client keeps the secret and redeems through the API instance,
   * whose request a worker signs with the key the service holds for the client.
   */
  const evmToLtc = async (): Promise<{ order: Order; deltas: Delta[] }> => {
    const secret = randomBytes(32).toString('hex');
    const secretHash = createHash('sha256').update(Buffer.from(secret, 'hex')).digest('hex');
    const o = await createOrder({ asset: `${source.key}:wbtc`, owner: user.address }, { asset: `${LTC_CHAIN}:ltc`, owner: userLtc }, AMOUNT, { secret_hash: secretHash });
    await patchInitiate(o.id, o.result.typed_data);
    // 409 until the solver's funding is mined and confirmed.
    const redeemPath = `/v2/orders/${o.id}?action=redeem`;
    let asked = await call('PATCH', redeemPath, { secret });
    for (const end = Date.now() + 120_000; asked.status === 409 && Date.now() < end; asked = await call('PATCH', redeemPath, { secret })) {
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(asked.status, 202, `${JSON.stringify(asked.body)}${logs()}`);
    const order = await completed(o.id);
    assert.equal(order.destination_swap.redeem_tx_hash, asked.body.result, 'WBTC -> LTC: the redeem is the one the workers signed');
    assert.equal(order.destination_swap.secret, secret);
    const htlc = order.destination_swap.swap_id;
    const funding = await ltcTransfer(order.destination_swap.initiate_tx_hash);
    assert.equal(netTo(funding, htlc), o.receive, 'WBTC -> LTC: the solver paid the HTLC the amount');
    assert.ok(funding.inputs.every((i) => i.address === solverLtc), "WBTC -> LTC: the funding spends the solver's wallet");
    assert.ok(funding.outputs.every((out) => out.address === htlc || out.address === solverLtc), "WBTC -> LTC: the funding's change goes back to the solver's wallet");
    assert.equal(netTo(funding, solverLtc), -(o.receive + feeOf(funding)));
    const redeem = await ltcTransfer(order.destination_swap.redeem_tx_hash);
    assert.deepEqual([sum(redeem.inputs), redeem.inputs.every((i) => i.address === htlc)], [o.receive, true], 'WBTC -> LTC: the redeem spends the HTLC');
    assert.ok(redeem.outputs.every((out) => out.address === userLtc), "WBTC -> LTC: the redeem pays the client's address alone");
    assert.ok(feeOf(redeem) > 0n && feeOf(redeem) < 100_000n, `WBTC -> LTC: the redeem paid a fee: ${feeOf(redeem)}`);
    assert.equal(await confirmedBalance(ltc, htlc), 0n, 'WBTC -> LTC: nothing left in the HTLC');
    const why = 'WBTC -> LTC';
    return {
      order,
      deltas: [
        [`${source.key} WBTC user`, -AMOUNT, `${why}: the user paid the source`],
        [`${source.key} WBTC solver`, AMOUNT, `${why}: the solver redeemed the source`],
        ['litecoin user', o.receive - feeOf(redeem), `${why}: the user received the destination, less the redeem's fee`],
        ['litecoin solver', -(o.receive + feeOf(funding)), `${why}: the solver paid the destination and its funding's fee`],
      ],
    };
  };

  /** SOL: the user signs and sends versioned_tx; the solver redeems it, the rent of the swap account goes back to the user. */
  const solToEvm = async (): Promise<{ order: Order; deltas: Delta[] }> => {
    const o = await createOrder({ asset: `${SOL_CHAIN}:sol`, owner: userSolana.address }, { asset: `${destination.key}:wbtc`, owner: user.address }, SOL);
    const initiate = await signAndSend(userSolana, o.result.versioned_tx as string, Date.now() + 60_000, 200);
    const order = await completed(o.id);
    assert.equal(order.source_swap.initiate_tx_hash, initiate);
    const initiateFee = (await solanaTxEffect(userSolana, initiate, undefined)).fee;
    const redeemFee = (await solanaTxEffect(userSolana, order.source_swap.redeem_tx_hash, undefined)).fee;
    const why = 'SOL -> WBTC';
    return {
      order,
      deltas: [
        ['solana SOL user', -(SOL + initiateFee), `${why}: the user paid the source and its initiate's fee`],
        ['solana SOL solver', SOL - redeemFee, `${why}: the solver redeemed the source, less its redeem's fee`],
        [`${destination.key} WBTC user`, o.receive, `${why}: the user received the destination`],
        [`${destination.key} WBTC solver`, -o.receive, `${why}: the solver paid the destination`],
      ],
    };
  };

  /** Tron USDT: the user approves the new HTLC, then signs the TIP-712 initiate the relayer sends. */
  const usdtToEvm = async (): Promise<{ order: Order; deltas: Delta[] }> => {
    const o = await createOrder({ asset: `${TRON_CHAIN}:usdt`, owner: userTron }, { asset: `${source.key}:wbtc`, owner: user.address }, USDT_AMOUNT);
    const approval = o.result.approval_transaction as { to: string; data: Hex };
    const head = await tron.api.nowBlock();
    const call: TronCall = { contract: approval.to, data: approval.data };
    const approve = await signTronCall({ call, owner: userTron, privateKey: userKey, reference: head, expiration: head.timestampMs + 60_000, feeLimitSun: 150_000_000n });
    assert.equal((await tron.api.broadcast(approve as unknown as Record<string, unknown>)).result, true);
    const approved = await until('the approval to land', () => tron.api.transactionInfo(approve.txID), 30_000, 200);
    assert.equal(approved.failed, false);
    await patchInitiate(o.id, o.result.typed_data);
    const order = await completed(o.id);
    const feeOfTx = async (txId: string) => (await until(`${txId} to land`, () => tron.api.transactionInfo(txId), 30_000, 200)).feeSun;
    const why = 'USDT -> WBTC';
    return {
      order,
      deltas: [
        ['tron USDT user', -USDT_AMOUNT, `${why}: the user paid the source`],
        ['tron TRX user', -approved.feeSun, `${why}: the user paid its approval, and nothing for the gasless initiate`],
        ['tron TRX relayer', -(await feeOfTx(order.source_swap.initiate_tx_hash)), `${why}: the relayer paid the initiate`],
        ['tron USDT solver', USDT_AMOUNT, `${why}: the solver redeemed the source`],
        ['tron TRX solver', -(await feeOfTx(order.source_swap.redeem_tx_hash)), `${why}: the solver paid its redeem`],
        [`${source.key} WBTC user`, o.receive, `${why}: the user received the destination`],
        [`${source.key} WBTC solver`, -o.receive, `${why}: the solver paid the destination`],
      ],
    };
  };

  const swaps = await Promise.all([evmSwap(), ltcToEvm(), evmToLtc(), solToEvm(), usdtToEvm()]);
  const after = await readBalances();
  for (const name of Object.keys(balances)) {
    const moves = swaps.flatMap((s) => s.deltas).filter(([balance]) => balance === name);
    const expected = moves.reduce((total, [, amount]) => total + amount, 0n);
    assert.equal(after[name]! - before[name]!, expected, `${name}: ${moves.map(([, amount, why]) => `${amount} (${why})`).join(', ') || 'unchanged'}`);
  }

  // Rule 7 on both instances, and the API instance never held a key.
  const swapSecrets = swaps.map((s) => s.order.destination_swap.secret);
  for (const secret of swapSecrets) assert.match(secret, /^[0-9a-f]{64}$/);
  for (const [name, output] of [['workers', workers.output()], ['api', apiInstance.output()]] as const) {
    for (const hidden of [...secrets, password, ...swapSecrets]) assert.ok(!output.toLowerCase().includes(hidden), `${name}: a key, the password or a swap's secret is in its output`);
    assert.doesNotMatch(output, /plaintext key/);
  }
  assert.doesNotMatch(apiInstance.output(), /secrets are sealed to/);
});
