import { encodeDeployData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Asset } from '../registry.ts';
import { loadArtifact, runtimeCodeHash, type ContractArtifact } from '../solidity-htlc/artifacts.ts';
import type { DeployedContract } from '../../deploy/deployment-file.ts';
import { WrongChainError, type FamilyDeployer } from '../../deploy/family-deployer.ts';
import { evmHexToTron, normalizeTronAddress, tronToEvmHex } from './address.ts';
import { TronApi, TronNodeUnreachable } from './api.ts';
import { signTronCreation } from './creation.ts';
import { TronHtlcReader } from './htlc-reads.ts';
import { hex41 } from './transactions.ts';

/**
 * The most TRX (SUN) a deployment may burn for energy. The HTLC's creation takes about 1.1 M energy, nearly
 * all of it the 200 a byte Tron charges for its 5 KB of runtime code: about 110 TRX at 100 SUN an energy.
 */
export const DEPLOY_FEE_LIMIT_SUN = 1_000_000_000n;
/** How long a signed creation stays valid past the head block, as java-tron builds transactions. */
const EXPIRATION_MS = 60_000;
/** How long a confirmation is awaited through a node that does not answer before the run gives up. */
const UNREACHABLE_GIVE_UP_MS = 5 * 60_000;

type Json = Record<string, unknown>;

/**
 * Tron's chain id as the node serves it: the last 4 bytes of the genesis block's id (java-tron's CHAINID
 * opcode and its `eth_chainId` read it there: mainnet's genesis ends in 2b6653dc, 728126428).
 */
export async function servedTronChainId(api: TronApi): Promise<string> {
  const genesis = await api.blockByNumber(0n);
  if (!genesis) throw new Error('the node serves no genesis block (wallet/getblock 0)');
  return `tron:${parseInt(genesis.blockId.slice(-8), 16)}`;
}

/** The runtime code at `address` (base58) as `wallet/getcontractinfo` serves it (`runtimecode`), or undefined for none. */
export async function tronRuntimeCode(api: TronApi, address: string): Promise<Hex | undefined> {
  const info = await api.post<Json>('wallet/getcontractinfo', { value: hex41(address), visible: false });
  const code = info.runtimecode;
  return typeof code === 'string' && /^([0-9a-fA-F]{2})+$/.test(code) ? `0x${code.toLowerCase()}` : undefined;
}

/** Why `address` (base58) does not hold the TronHTLC artifact's code locking `token` (base58), or undefined when it does. */
export async function tronHtlcMismatch(api: TronApi, address: string, token: string, artifact = loadArtifact('tron', 'TronHTLC')): Promise<string | undefined> {
  const code = await tronRuntimeCode(api, address);
  if (!code) return `no contract at ${address}`;
  if (runtimeCodeHash(code, artifact) !== artifact.codeHash) return `the code at ${address} is not the ${artifact.contract} artifact's (code hash ${artifact.codeHash})`;
  const locked = await new TronHtlcReader(api).token(address);
  return locked === normalizeTronAddress(token) ? undefined : `${artifact.contract} at ${address} has token() ${locked}, not ${token}`;
}

/** Whether `address` (base58) holds the TronHTLC artifact's code locking `token` (base58). */
export async function isTronHtlcOf(api: TronApi, address: string, token: string, artifact = loadArtifact('tron', 'TronHTLC')): Promise<boolean> {
  return (await tronHtlcMismatch(api, address, token, artifact)) === undefined;
}

/**
 * `hashlock deploy` on a Tron chain, through Tron's HTTP API alone: the TronHTLC of each TRC-20 asset.
 * A contract is taken where an earlier run recorded it or the registry names it (a full node keeps no
 * index of an account's transactions, so the deployment file is the memory of what was deployed), when
 * its runtime code has the artifact's code hash and its `token()` is the asset's token; otherwise it is
 * created by a CreateSmartContract transaction signed offline, and checked on chain once it landed.
 */
export const tronDeployer: FamilyDeployer = async (ctx) => {
  const rpcUrl = ctx.access.rpc_url;
  if (!rpcUrl) throw new Error(`${ctx.chain.key}: the config names no rpc_url (chains.${ctx.chain.key}.rpc_url)`);
  const api = new TronApi(rpcUrl, ctx.access.api_key ? { apiKey: ctx.access.api_key } : {});
  const served = await servedTronChainId(api);
  if (served !== ctx.chain.id) throw new WrongChainError(ctx.chain.key, ctx.chain.id, served);
  const privateKey: Hex = `0x${Buffer.from(ctx.deployerKey).toString('hex')}`;
  const deployer = evmHexToTron(privateKeyToAccount(privateKey).address);
  const artifact = loadArtifact('tron', 'TronHTLC');
  const htlcAssets = ctx.assets.filter((a) => a.htlc.schema === 'tron:htlc_trc20');

  // A registry address that holds other code than its asset's HTLC is never silently replaced.
  for (const asset of htlcAssets) {
    if (asset.htlc.address !== '' && !(await isTronHtlcOf(api, asset.htlc.address, asset.token.address, artifact))) {
      throw new Error(`TronHTLC of ${asset.id}: the registry names ${asset.htlc.address}, whose code is not the TronHTLC artifact's with token() ${asset.token.address}; nothing was deployed`);
    }
  }

  const known = [...(ctx.previous?.contracts ?? []).map((c) => c.address), ...htlcAssets.map((a) => a.htlc.address)];
  const candidates = [...new Set(known.flatMap((a) => normalizeTronAddress(a) ?? []))];
  const taken = new Set<string>();
  const contracts: DeployedContract[] = [];
  for (const asset of htlcAssets) {
    let found = normalizeTronAddress(asset.htlc.address);
    for (const address of found ? [] : candidates) {
      if (!taken.has(address) && (await isTronHtlcOf(api, address, asset.token.address, artifact))) {
        found = address;
        break;
      }
    }
    let transaction: string | undefined;
    if (found) ctx.log(`TronHTLC of ${asset.id}: found at ${found}`);
    else ({ address: found, txId: transaction } = await createHtlc(api, { asset, artifact, privateKey, deployer, log: ctx.log }));
    taken.add(found);
    contracts.push({ contract: 'TronHTLC', address: found, assets: [asset.id], code_hash: artifact.codeHash, ...(transaction ? { transaction } : {}) });
  }
  return { chain_id: served, deployer, contracts, updated_at: new Date().toISOString() };
};

/** Creates the asset's TronHTLC from the deployer and waits until it landed with the artifact's code. */
async function createHtlc(
  api: TronApi,
  input: { asset: Asset; artifact: ContractArtifact; privateKey: Hex; deployer: string; log: (line: string) => void },
): Promise<{ address: string; txId: string }> {
  const { asset, artifact, deployer } = input;
  const what = `TronHTLC of ${asset.id}`;
  const balance = await api.balanceSun(hex41(deployer));
  if (balance === 0n) throw new Error(`${what}: the deployer ${deployer} has no TRX on ${asset.chain.key} to pay the energy; nothing was deployed`);
  const [head, reference] = await Promise.all([api.nowBlock(), api.nowBlock(true)]);
  const expiration = head.timestampMs + EXPIRATION_MS;
  const { transaction, contractAddress } = await signTronCreation({
    owner41: hex41(deployer),
    abi: artifact.abi,
    code: encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args: [tronToEvmHex(asset.token.address, `${asset.id} token`)] }),
    name: artifact.contract,
    privateKey: input.privateKey,
    reference,
    expiration,
    feeLimitSun: DEPLOY_FEE_LIMIT_SUN,
  });
  const address = evmHexToTron(`0x${contractAddress.slice(2)}`);
  // Logged before it is sent: should this run stop before it records the contract, the operator knows where it may be.
  input.log(`${what}: deploying at ${address} in ${transaction.txID}`);
  await broadcast(api, transaction, what);
  const info = await landed(api, transaction.txID, expiration, what);
  const receipt = (info.receipt ?? {}) as Json;
  if (info.result === 'FAILED' || receipt.result !== 'SUCCESS') {
    throw new Error(`${what}: the deployment ${transaction.txID} failed (${String(receipt.result ?? info.result)}): the deployer ${deployer} had ${balance} SUN`);
  }
  if (String(info.contract_address).toLowerCase() !== contractAddress) {
    throw new Error(`${what}: the node says ${transaction.txID} created ${String(info.contract_address)}, not ${contractAddress}`);
  }
  if (!(await isTronHtlcOf(api, address, asset.token.address, artifact))) {
    throw new Error(`${what}: the code at ${address} after ${transaction.txID} is not the artifact's`);
  }
  input.log(`${what}: deployed at ${address}`);
  return { address, txId: transaction.txID };
}

/** Broadcasts a signed transaction; a node that did not answer is asked again with the same bytes (a second copy is DUP_TRANSACTION_ERROR). */
async function broadcast(api: TronApi, transaction: Json, what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await api.broadcast(transaction);
      if (answer.result || answer.code === 'DUP_TRANSACTION_ERROR') return;
      throw new Error(`${what}: the node refused the deployment: ${answer.code}${answer.message ? `: ${answer.message}` : ''}`);
    } catch (err) {
      if (!(err instanceof TronNodeUnreachable) || attempt >= 3) throw err;
      await sleep(1_000 * attempt);
    }
  }
}

/**
 * The transaction's info once it is in a block. The head is read before the info: a transaction in no
 * block up to a head past its expiration can never land.
 */
async function landed(api: TronApi, txId: string, expiration: number, what: string): Promise<Json> {
  let unreachableSince: number | undefined;
  for (;;) {
    try {
      const head = await api.nowBlock();
      const info = await api.post<Json>('wallet/gettransactioninfobyid', { value: txId });
      if (info.id !== undefined) return info;
      if (head.timestampMs > expiration) throw new Error(`${what}: the deployment ${txId} expired without landing; nothing was deployed`);
      unreachableSince = undefined;
    } catch (err) {
      if (!(err instanceof TronNodeUnreachable)) throw err;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > UNREACHABLE_GIVE_UP_MS) throw new Error(`${what}: the node did not answer for 5 minutes; ${txId} may still have landed`, { cause: err });
    }
    await sleep(500);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
