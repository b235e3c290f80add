import {
  bytesToHex,
  createPublicClient,
  createWalletClient,
  getAddress,
  getContractAddress,
  http,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
  type LocalAccount,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { runtimeCodeHash, type ContractArtifact } from '../solidity-htlc/artifacts.ts';
import type { DeployedContract } from '../../deploy/deployment-file.ts';
import { WrongChainError, type FamilyDeployer } from '../../deploy/family-deployer.ts';
import { contractArtifact } from './contracts.ts';
import { evmChainId } from './index.ts';

/** One contract to have on chain. */
export interface EvmContractStep {
  /** The artifact (contracts/artifacts/evm/<contract>.json). */
  contract: string;
  args: readonly unknown[];
  /** The registry assets it serves (an HTLC's), for the deployment file. */
  assets: string[];
  /** What tells this deployment apart from others of the same code (an HTLC's token): read from a candidate. */
  identity?: { functionName: string; expected: string };
  /**
   * Where it must land (`hashlock dev`, whose registry names the deployer's addresses at fixed nonces):
   * the deployer spends the nonces before it with empty transfers. Without it, the next nonce.
   */
  at?: Address;
}

/** How far `at` may lie beyond the deployer's next nonce, and how many of its past nonces a search reads. */
const MAX_NONCE_GAP = 64;
const MAX_NONCES_SEARCHED = 2_000;

export interface EvmDeployAccess {
  rpcUrl: string;
  chainId: number;
  deployerKey: Hex;
  log?: (line: string) => void;
}

/**
 * Has each step's contract on chain, through standard JSON-RPC only: a contract whose runtime code has
 * the artifact's code hash (and the step's identity) at the step's `at`, at an address an earlier run
 * recorded (`known`), or among the deployer's own creations, is taken; the others are deployed from the
 * deployer's key, one after another, each checked on chain after its receipt.
 */
export async function deployEvmSteps(access: EvmDeployAccess, steps: readonly EvmContractStep[], known: readonly string[] = []): Promise<DeployedContract[]> {
  const log = access.log ?? (() => {});
  const transport = http(access.rpcUrl, { retryCount: 3 });
  const client = createPublicClient({ transport, pollingInterval: 250 });
  const account = privateKeyToAccount(access.deployerKey);
  const wallet = createWalletClient({
    account,
    transport,
    chain: { id: access.chainId, name: `evm:${access.chainId}`, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [access.rpcUrl] } } },
  });
  const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const created = Array.from({ length: Math.min(nonce, MAX_NONCES_SEARCHED) }, (_, n) => getContractAddress({ from: account.address, nonce: BigInt(n) }));
  const candidates = [...new Set([...known.filter((a) => /^0x[0-9a-fA-F]{40}$/.test(a)).map((a) => getAddress(a)), ...created])];
  const codes = new Map<Address, Hex | undefined>();
  for (let i = 0; i < candidates.length; i += 25) {
    const batch = candidates.slice(i, i + 25);
    const read = await Promise.all(batch.map((address) => client.getCode({ address })));
    batch.forEach((address, j) => codes.set(address, read[j]));
  }

  const taken = new Set<Address>();
  const results: DeployedContract[] = [];
  for (const step of steps) {
    const artifact = contractArtifact(step.contract);
    const where = step.at ? [getAddress(step.at)] : candidates;
    let found: Address | undefined;
    for (const address of where) {
      if (taken.has(address)) continue;
      const code = codes.has(address) ? codes.get(address) : await client.getCode({ address });
      if (await isDeploymentOf(client, address, code, artifact, step)) {
        found = address;
        break;
      }
    }
    if (found) {
      taken.add(found);
      log(`${describe(step)}: found at ${found}`);
      results.push({ contract: step.contract, address: found, assets: step.assets, code_hash: artifact.codeHash });
      continue;
    }
    if (step.at) await spendNoncesBefore(client, wallet, account, step.at);
    const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args: step.args, chain: wallet.chain, account });
    log(`${describe(step)}: deploying in ${hash}`);
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 600_000 });
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`${describe(step)}: the deployment ${hash} reverted`);
    const address = getAddress(receipt.contractAddress);
    if (step.at && address !== getAddress(step.at)) throw new Error(`${describe(step)} landed at ${address}, not at ${step.at}`);
    if (!(await isDeploymentOf(client, address, await client.getCode({ address }), artifact, step))) {
      throw new Error(`${describe(step)}: the code at ${address} after ${hash} is not the artifact's`);
    }
    taken.add(address);
    log(`${describe(step)}: deployed at ${address}`);
    results.push({ contract: step.contract, address, assets: step.assets, code_hash: artifact.codeHash, transaction: hash });
  }
  return results;
}

const describe = (step: EvmContractStep): string => (step.assets.length > 0 ? `${step.contract} of ${step.assets.join(', ')}` : step.contract);

const isDeploymentOf = async (client: Pick<PublicClient, 'readContract'>, address: Address, code: Hex | undefined, artifact: ContractArtifact, step: EvmContractStep): Promise<boolean> =>
  (await evmCodeMismatch(client, address, code, artifact, step.identity)) === undefined;

/**
 * Why `code`, read at `address`, is not a deployment of `artifact` (with `identity`'s value, an HTLC's
 * token), or undefined when it is: what `hashlock deploy` finds contracts by and preflight checks.
 */
export async function evmCodeMismatch(
  client: Pick<PublicClient, 'readContract'>,
  address: Address,
  code: Hex | undefined,
  artifact: ContractArtifact,
  identity?: EvmContractStep['identity'],
): Promise<string | undefined> {
  if (!code || code === '0x') return `no contract at ${address}`;
  if (runtimeCodeHash(code, artifact) !== artifact.codeHash) return `the code at ${address} is not the ${artifact.contract} artifact's (code hash ${artifact.codeHash})`;
  if (!identity) return undefined;
  const value = String(await client.readContract({ address, abi: artifact.abi, functionName: identity.functionName }));
  return value.toLowerCase() === identity.expected.toLowerCase() ? undefined : `${artifact.contract} at ${address} has ${identity.functionName}() ${value}, not ${identity.expected}`;
}

/** Empty transfers to itself until the deployer's next contract lands at `at`. */
async function spendNoncesBefore(client: PublicClient, wallet: WalletClient, account: LocalAccount, at: Address): Promise<void> {
  const next = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
  for (let nonce = next; ; nonce++) {
    if (nonce >= next + MAX_NONCE_GAP) throw new Error(`${at} is not among the next ${MAX_NONCE_GAP} contract addresses of the deployer ${account.address}`);
    if (getContractAddress({ from: account.address, nonce: BigInt(nonce) }) === getAddress(at)) return;
    const hash = await wallet.sendTransaction({ account, chain: wallet.chain, to: account.address, value: 0n, nonce });
    await client.waitForTransactionReceipt({ hash });
  }
}

/**
 * `hashlock deploy` on an EVM chain: the HTLC of each ERC-20 asset, the NativeHTLC of the native asset,
 * and (with the whole chain, when a fee signer is named) the FeeClaim contract.
 */
export const evmDeployer: FamilyDeployer = async (ctx) => {
  const expected = Number(evmChainId(ctx.chain));
  const client = createPublicClient({ transport: http(requireRpc(ctx.access.rpc_url, ctx.chain.key), { retryCount: 3 }) });
  const served = await client.getChainId();
  if (served !== expected) throw new WrongChainError(ctx.chain.key, `evm:${expected}`, `evm:${served}`);
  const deployerKey = bytesToHex(ctx.deployerKey);
  const deployer = privateKeyToAccount(deployerKey).address;

  const steps: EvmContractStep[] = [];
  const known: string[] = (ctx.previous?.contracts ?? []).map((c) => c.address);
  for (const asset of ctx.assets) {
    if (asset.htlc.address !== '') known.push(asset.htlc.address);
    if (asset.htlc.schema === 'evm:htlc_erc20') {
      steps.push({ contract: 'HTLC', args: [asset.token.address], assets: [asset.id], identity: { functionName: 'token', expected: asset.token.address } });
    } else if (asset.htlc.schema === 'evm:htlc') {
      steps.push({ contract: 'NativeHTLC', args: [], assets: [asset.id] });
    }
  }
  const feeSigner = ctx.options.feeSigner;
  if (ctx.wholeChain && feeSigner) steps.push({ contract: 'FeeClaim', args: [getAddress(feeSigner), deployer], assets: [], identity: { functionName: 'signer', expected: feeSigner } });
  else if (ctx.wholeChain) ctx.log(`${ctx.chain.key}: no fee signer named (--fee-signer or HASHLOCK_FEE_SIGNER_KEY): FeeClaim not deployed`);

  // A registry address that holds other code than its asset's HTLC is never silently replaced.
  for (const [i, step] of steps.entries()) {
    const registered = ctx.assets.find((a) => step.assets.includes(a.id))?.htlc.address;
    if (!registered) continue;
    const artifact = contractArtifact(step.contract);
    const address = getAddress(registered);
    if (!(await isDeploymentOf(client, address, await client.getCode({ address }), artifact, step))) {
      throw new Error(`${describe(step)}: the registry names ${registered}, whose code is not the ${step.contract} artifact's${step.identity ? ` with ${step.identity.functionName}() ${step.identity.expected}` : ''}; nothing was deployed`);
    }
    steps[i] = { ...step, at: address };
  }
  const contracts = await deployEvmSteps({ rpcUrl: ctx.access.rpc_url!, chainId: expected, deployerKey, log: ctx.log }, steps, known);
  return { chain_id: `evm:${expected}`, deployer, contracts, updated_at: new Date().toISOString() };
};

function requireRpc(rpcUrl: string | undefined, chainKey: string): string {
  if (!rpcUrl) throw new Error(`${chainKey}: the config names no rpc_url (chains.${chainKey}.rpc_url)`);
  return rpcUrl;
}
