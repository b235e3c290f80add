// `hashlock preflight` on a Tron chain, through Tron's HTTP API alone: the local Tron chain started empty, a
// deployer funded from a genesis account, the test USDT created and its HTLC deployed by `hashlock deploy`'s
// Tron deployer. Green through `chainChecks` (the adapter's registration, the config's minimums); red for a
// registry naming another chain (that row alone), an HTLC address holding other code or none, a relayer under
// its minimum, a registry whose decimals differ, and a node that does not answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TronWeb, utils } from 'tronweb';
import { encodeAbiParameters, numberToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Registry, type Chain } from '../../../src/chains/registry.ts';
import { evmHexToTron } from '../../../src/chains/tron/address.ts';
import { TronApi } from '../../../src/chains/tron/api.ts';
import { tronDeployer } from '../../../src/chains/tron/deploy.ts';
import { tronPreflight } from '../../../src/chains/tron/preflight.ts';
import { hex41 } from '../../../src/chains/tron/transactions.ts';
import type { ServiceConfig } from '../../../src/config/service-config.ts';
import { devAccount } from '../../../src/localnet/accounts.ts';
import { WEI_PER_SUN } from '../../../src/localnet/tron/chain.ts';
import { tronContractArtifact } from '../../../src/localnet/tron/contracts.ts';
import { startTronLocalnet, type TronLocalnet } from '../../../src/localnet/tron/local-chain.ts';
import type { CheckRow, PreflightContext } from '../../../src/preflight/family-preflight.ts';
import { chainChecks } from '../../../src/preflight/preflight.ts';
import { TRON_LOCALNET_CHAIN } from '../../helpers/tron-localnet.ts';

type Json = Record<string, unknown>;

const TRX = 1_000_000n;
const USDT = 1_000_000n;
const deployerKey = generatePrivateKey();
const deployer = evmHexToTron(privateKeyToAccount(deployerKey).address);
const relayerKey = generatePrivateKey();
const relayer = evmHexToTron(privateKeyToAccount(relayerKey).address);

let localnet: TronLocalnet;
let token: string;
let htlc: string;

/** A registry of tron_localnet alone: the token above, the HTLC address as given (none by default). */
function tronRegistry(options: { id?: string; htlc?: string; decimals?: number } = {}): Registry {
  const entry = structuredClone(TRON_LOCALNET_CHAIN);
  entry.id = options.id ?? entry.id;
  entry.assets[0]!.htlc.address = options.htlc ?? '';
  entry.assets[0]!.token.address = token;
  entry.assets[0]!.decimals = options.decimals ?? entry.assets[0]!.decimals;
  return new Registry({ network: 'localnet', chains: [entry] }, 'test', { undeployed: true });
}
const tronChain = (options: Parameters<typeof tronRegistry>[0] = {}): Chain => tronRegistry(options).chain('tron_localnet')!;

async function sendSigned(transaction: Json): Promise<Json> {
  const api = new TronApi(localnet.url);
  const signed = utils.crypto.signTransaction(deployerKey.slice(2), structuredClone(transaction)) as unknown as Json & { txID: string };
  assert.deepEqual(await api.broadcast(signed), { result: true });
  const info = await api.post<Json>('wallet/gettransactioninfobyid', { value: signed.txID });
  assert.equal((info.receipt as Json).result, 'SUCCESS');
  return info;
}

before(async () => {
  localnet = await startTronLocalnet({ blockTimeMs: 0, solidifyDepth: 1 });
  const api = new TronApi(localnet.url);
  // A faucet: a genesis account of the chain pays the deployer 2,000 TRX and the relayer 5 TRX.
  for (const [key, sun] of [[deployerKey, 2_000n * TRX], [relayerKey, 5n * TRX]] as const) {
    await localnet.chain.anvil.rpc('eth_sendTransaction', [{ from: devAccount('deployer').address, to: privateKeyToAccount(key).address, value: numberToHex(sun * WEI_PER_SUN) }]);
  }
  await localnet.mine();
  const artifact = tronContractArtifact('TestToken');
  const created = await sendSigned(
    await api.post<Json>('wallet/deploycontract', {
      owner_address: hex41(deployer),
      abi: JSON.stringify(artifact.abi),
      bytecode: artifact.bytecode.slice(2),
      parameter: encodeAbiParameters([{ type: 'string' }, { type: 'string' }, { type: 'uint8' }, { type: 'address' }], ['Tether USD (test)', 'USDT', 6, privateKeyToAccount(deployerKey).address]).slice(2),
      fee_limit: 1_000_000_000,
      consume_user_resource_percent: 100,
      origin_energy_limit: 10_000_000,
      name: 'TestToken',
    }),
  );
  token = TronWeb.address.fromHex(String(created.contract_address));
  // The deployer is the solver here: it mints itself its inventory.
  const tronWeb = new TronWeb({ fullHost: localnet.url, privateKey: deployerKey.slice(2) });
  const mint = await tronWeb.transactionBuilder.triggerSmartContract(token, 'mint(address,uint256)', { feeLimit: 100_000_000 }, [{ type: 'address', value: deployer }, { type: 'uint256', value: String(1_000n * USDT) }], deployer);
  await sendSigned(mint.transaction as unknown as Json);
  const deployment = await tronDeployer({
    chain: tronChain(),
    access: { rpc_url: localnet.url },
    deployerKey: Buffer.from(deployerKey.slice(2), 'hex'),
    assets: tronChain().assets,
    previous: undefined,
    wholeChain: true,
    options: {},
    log: () => undefined,
  });
  htlc = deployment.contracts[0]!.address;
});
after(() => localnet?.stop());

const ctx = (overrides: Partial<PreflightContext> = {}): PreflightContext => ({
  chain: tronChain({ htlc }),
  access: { rpc_url: localnet.url, relayer },
  keys: { solver: deployerKey },
  minimums: { inventory: new Map() },
  now: Date.now(),
  ...overrides,
});
const row = (rows: CheckRow[], check: string) => rows.find((r) => r.check === check);
const errors = (rows: CheckRow[]) => rows.filter((r) => r.status === 'error').map((r) => [r.check, r.detail]);

test('green after deploy, through the adapter and the config: chain id, code, decimals, clock, balances and inventory', async () => {
  const config = {
    chains: { tron_localnet: { rpc_url: localnet.url, relayer, minimum_balances: { relayer: String(5n * TRX), solver: String(TRX), inventory: { usdt: String(1_000n * USDT) } } } },
    keys: { solver: deployerKey },
    solvers: [],
  } as unknown as ServiceConfig;
  const rows = await chainChecks(config, tronRegistry({ htlc }), Date.now());
  assert.deepEqual(
    rows.map((r) => [r.check, r.status]),
    [
      ['chain id', 'ok'],
      ['clock', 'ok'],
      ['code usdt', 'ok'],
      ['decimals usdt', 'ok'],
      ['balance relayer', 'ok'],
      ['balance solver', 'ok'],
      ['inventory usdt', 'ok'],
    ],
    JSON.stringify(rows),
  );
  assert.equal(row(rows, 'chain id')!.detail, 'tron:728126428');
  assert.equal(row(rows, 'code usdt')!.detail, `TronHTLC at ${htlc}`);
  assert.equal(row(rows, 'decimals usdt')!.detail, '6');
  assert.equal(row(rows, 'balance relayer')!.detail, '5000000 SUN (minimum 5000000)');
  assert.equal(row(rows, 'inventory usdt')!.detail, '1000000000 usdt (minimum 1000000000)');
});

test('a registry naming another chain: the chain id row alone', async () => {
  const rows = await tronPreflight(ctx({ chain: tronChain({ id: 'tron:3448148188', htlc }) }));
  assert.deepEqual(rows, [{ scope: 'tron_localnet', check: 'chain id', status: 'error', detail: 'the node serves tron:728126428, the registry names tron:3448148188' }]);
});

test('an HTLC address holding other code, or none, is an error of its code row', async () => {
  const foreign = await tronPreflight(ctx({ chain: tronChain({ htlc: token }) }));
  assert.deepEqual(errors(foreign), [['code usdt', `the code at ${token} is not the TronHTLC artifact's (code hash ${tronContractArtifact('TronHTLC').codeHash})`]]);
  const undeployed = await tronPreflight(ctx({ chain: tronChain() }));
  assert.deepEqual(errors(undeployed), [['code usdt', 'tron_localnet:usdt has no HTLC address: run hashlock deploy --chain tron_localnet']]);
});

test('a relayer under its minimum (its key held), and a registry whose decimals differ, are errors of their rows', async () => {
  const poor = await tronPreflight(ctx({ keys: { relayer: relayerKey, solver: deployerKey }, access: { rpc_url: localnet.url }, minimums: { relayer: 6n * TRX, inventory: new Map() } }));
  assert.deepEqual(errors(poor), [['balance relayer', '5000000 SUN, under the minimum 6000000']]);
  const decimals = await tronPreflight(ctx({ chain: tronChain({ htlc, decimals: 8 }) }));
  assert.deepEqual(errors(decimals), [['decimals usdt', `the token ${token} has 6 decimals, the registry says 8`]]);
});

test('a node that does not answer is a row, not a throw', async () => {
  const rows = await tronPreflight(ctx({ access: { rpc_url: 'http://127.0.0.1:1' } }));
  assert.deepEqual(rows.map((r) => [r.check, r.status]), [['node', 'error']]);
});
