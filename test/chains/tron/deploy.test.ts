// `hashlock deploy` on a Tron chain that starts empty: the local Tron chain with no contracts, a deployer key
// funded from a genesis account as a faucet would, Tron's HTTP API only. The deployer creates the TRC-20
// HTLC by a CreateSmartContract transaction signed offline, finds it again by its code (a second run sends
// nothing), and refuses a node of another chain before sending anything. The local chain builds creations
// as java-tron's wallet/deploycontract does, places a contract where Tron's rule puts it (checked against
// TronWeb's own rule), and refuses a creation signed by another key.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { TronWeb, utils } from 'tronweb';
import { encodeAbiParameters, numberToHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { evmHexToTron } from '../../../src/chains/tron/address.ts';
import { TronApi } from '../../../src/chains/tron/api.ts';
import { tronContractAddress } from '../../../src/chains/tron/creation.ts';
import { loadRegistry } from '../../../src/chains/registry.ts';
import { loadArtifact, runtimeCodeHash } from '../../../src/chains/solidity-htlc/artifacts.ts';
import { hex41 } from '../../../src/chains/tron/transactions.ts';
import type { ServiceConfig } from '../../../src/config/service-config.ts';
import { deployChain } from '../../../src/deploy/deploy.ts';
import { WrongChainError } from '../../../src/deploy/family-deployer.ts';
import { devAccount } from '../../../src/localnet/accounts.ts';
import { WEI_PER_SUN } from '../../../src/localnet/tron/chain.ts';
import { startTronLocalnet, type TronLocalnet } from '../../../src/localnet/tron/local-chain.ts';
import { LOCALNET_REGISTRY_PATH } from '../../helpers/fixtures.ts';

type Json = Record<string, unknown>;
type Tx = Json & { txID: string; raw_data_hex: string; contract_address: string };

const TRX = 1_000_000n;
const HTLC = loadArtifact('tron', 'TronHTLC');
const TOKEN = loadArtifact('tron', 'TestToken');
const deployerKey = generatePrivateKey();
const deployer = evmHexToTron(privateKeyToAccount(deployerKey).address);
const dirs: string[] = [];

let localnet: TronLocalnet;
let api: TronApi;
let tronWeb: TronWeb;
let token: string;

const head = async () => (await api.nowBlock()).number;
const infoOf = (txId: string) => api.post<Json>('wallet/gettransactioninfobyid', { value: txId });
const sign = (tx: Tx, key: Hex = deployerKey) => utils.crypto.signTransaction(key.slice(2), structuredClone(tx)) as unknown as Tx;
const tokenArgs = () => encodeAbiParameters([{ type: 'string' }, { type: 'string' }, { type: 'uint8' }, { type: 'address' }], ['Tether USD (test)', 'USDT', 6, privateKeyToAccount(deployerKey).address]);

before(async () => {
  localnet = await startTronLocalnet({ blockTimeMs: 0, solidifyDepth: 1 });
  api = new TronApi(localnet.url);
  tronWeb = new TronWeb({ fullHost: localnet.url, privateKey: deployerKey.slice(2) });
  // A faucet: a genesis account of the chain (anvil's first, its 10,000 TRX) pays the new deployer 2,000 TRX.
  await localnet.chain.anvil.rpc('eth_sendTransaction', [{ from: devAccount('deployer').address, to: privateKeyToAccount(deployerKey).address, value: numberToHex(2_000n * TRX * WEI_PER_SUN) }]);
  await localnet.mine();
  // The test token, created through wallet/deploycontract as a plain HTTP client would: the node builds the transaction, the deployer checks and signs it.
  const built = await api.post<Tx>('wallet/deploycontract', {
    owner_address: hex41(deployer),
    abi: JSON.stringify(TOKEN.abi),
    bytecode: TOKEN.bytecode.slice(2),
    parameter: tokenArgs().slice(2),
    fee_limit: 1_000_000_000,
    consume_user_resource_percent: 100,
    origin_energy_limit: 10_000_000,
    name: 'TestToken',
  });
  assert.ok(utils.transaction.txCheck(built), 'the JSON deploycontract answers is its raw_data_hex');
  assert.equal(built.contract_address, tronContractAddress(built.txID, hex41(deployer)));
  assert.deepEqual(await api.broadcast(sign(built)), { result: true });
  const info = await infoOf(built.txID);
  assert.equal((info.receipt as Json).result, 'SUCCESS');
  assert.equal(info.contract_address, built.contract_address);
  token = TronWeb.address.fromHex(built.contract_address);
});
after(async () => {
  await localnet?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A registry of tron_localnet alone (its USDT the token above, the HTLC address as given) and a config reaching the chain. */
function setup(options: { chainId?: string; htlc?: string } = {}): ServiceConfig {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-tron-deploy-'));
  dirs.push(dir);
  const local = JSON.parse(readFileSync(LOCALNET_REGISTRY_PATH, 'utf8')) as { chains: Array<{ chain: string; id: string; assets: Array<{ htlc: { address: string }; token: { address: string } }> }> };
  const chain = local.chains.find((c) => c.chain === 'tron_localnet')!;
  chain.id = options.chainId ?? chain.id;
  chain.assets[0]!.htlc.address = options.htlc ?? '';
  chain.assets[0]!.token.address = token;
  const registryPath = join(dir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify({ network: 'localnet', chains: [chain] }));
  return { registryPath, chains: { tron_localnet: { rpc_url: localnet.url } } } as unknown as ServiceConfig;
}

const run = (config: ServiceConfig, lines: string[] = []) =>
  deployChain({ config, chainKey: 'tron_localnet', assetIds: [], deployerKey: Buffer.from(deployerKey.slice(2), 'hex'), options: {}, log: (line) => lines.push(line) });

test("deploys the TRC-20 asset's HTLC where Tron's rule puts it; a second run finds it by its code and sends nothing", async () => {
  const config = setup();
  const first = await run(config);
  assert.equal(first.created, 1);
  const [htlc] = first.deployment.contracts;
  assert.deepEqual([htlc!.contract, htlc!.assets, first.deployment.chain_id, first.deployment.deployer], ['TronHTLC', ['tron_localnet:usdt'], 'tron:728126428', deployer]);
  const contractInfo = await api.post<Json>('wallet/getcontractinfo', { value: hex41(htlc!.address) });
  assert.equal(runtimeCodeHash(`0x${String(contractInfo.runtimecode)}`, HTLC), HTLC.codeHash, "the code on chain is the artifact's");
  const read = await tronWeb.transactionBuilder.triggerConstantContract(htlc!.address, 'token()', {}, [], deployer);
  assert.equal(TronWeb.address.fromHex(`41${read.constant_result[0]!.slice(24)}`), token, "token() is the registry's token");
  const info = await infoOf(htlc!.transaction!);
  assert.deepEqual([info.contract_address, (info.receipt as Json).result], [hex41(htlc!.address), 'SUCCESS']);
  assert.equal(tronContractAddress(htlc!.transaction!, hex41(deployer)), hex41(htlc!.address));
  // What TronWeb's contract().at() reads: the creation's ABI and code.
  const onChain = (await tronWeb.trx.getContract(htlc!.address)) as unknown as { origin_address: string; bytecode: string; abi: { entrys: unknown[] } };
  assert.equal(onChain.origin_address, hex41(deployer));
  assert.ok(onChain.bytecode.startsWith(HTLC.bytecode.slice(2)));
  assert.equal(onChain.abi.entrys.length, HTLC.abi.length);

  const [block, balance] = [await head(), await api.balanceSun(hex41(deployer))];
  const lines: string[] = [];
  const second = await run(config, lines);
  assert.equal(second.created, 0);
  assert.deepEqual([await head(), await api.balanceSun(hex41(deployer))], [block, balance], 'the second run sent no transaction');
  assert.deepEqual(second.deployment.contracts, first.deployment.contracts);
  assert.deepEqual(lines, [`TronHTLC of tron_localnet:usdt: found at ${htlc!.address}`]);
  assert.equal(loadRegistry(config.registryPath).asset('tron_localnet:usdt')!.htlc.address, htlc!.address, 'the service reads the deployment file');
});

test('a node of another chain, or a registry HTLC address holding other code, is refused before anything is sent', async () => {
  const block = await head();
  await assert.rejects(run(setup({ chainId: 'tron:3448148188' })), (err: unknown) => err instanceof WrongChainError && /serves chain tron:728126428, the registry names tron:3448148188; nothing was deployed/.test(err.message));
  await assert.rejects(run(setup({ htlc: token })), /the registry names T\w{33}, whose code is not the TronHTLC artifact's with token\(\) T\w{33}; nothing was deployed/);
  assert.equal(await head(), block);
});

test("a creation TronWeb builds: signed by another key it is SIGERROR; signed by its owner it lands where TronWeb's rule says", async () => {
  const built = (await tronWeb.transactionBuilder.createSmartContract(
    { abi: TOKEN.abi as never, bytecode: TOKEN.bytecode.slice(2), rawParameter: tokenArgs().slice(2), feeLimit: 1_000_000_000, name: 'TestToken' },
    deployer,
  )) as unknown as Tx;
  assert.equal(tronContractAddress(built.txID, hex41(deployer)), built.contract_address);
  const forged = await api.broadcast(sign(built, generatePrivateKey()));
  assert.equal(forged.code, 'SIGERROR');
  assert.deepEqual(await infoOf(built.txID), {});
  assert.deepEqual(await api.post('wallet/getcontract', { value: built.contract_address }), {});
  assert.deepEqual(await api.broadcast(sign(built)), { result: true });
  assert.equal((await infoOf(built.txID)).contract_address, built.contract_address);
  const read = await tronWeb.transactionBuilder.triggerConstantContract(TronWeb.address.fromHex(built.contract_address), 'decimals()', {}, [], deployer);
  assert.equal(BigInt(`0x${read.constant_result[0]}`), 6n, "the constructor's storage is the contract's");
});
