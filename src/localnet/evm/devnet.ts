import { join } from 'node:path';
import { createPublicClient, createWalletClient, getAddress, getContractAddress, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { contractArtifact } from '../../chains/evm/contracts.ts';
import type { Chain } from '../../chains/registry.ts';
import type { FamilyDevnet } from '../local-chain.ts';
import { startAnvil } from './anvil.ts';
import { evmChainId } from '../../chains/evm/index.ts';
import { devAccount } from '../accounts.ts';
import { portFreeWithin } from '../free-port.ts';
import { leftoverNotes, stopLeftovers } from '../node-process.ts';

export interface EvmDeployment {
  chain: string;
  chainId: number;
  rpcUrl: string;
  contracts: { wbtc: Address; usdc: Address; wbtcHtlc: Address; usdcHtlc: Address; nativeHtlc: Address; feeClaim: Address };
}

/** The contracts of a local EVM chain; all but FeeClaim sit where the localnet registry says. */
type ContractKey = keyof EvmDeployment['contracts'];
type RegistryContract = Exclude<ContractKey, 'feeClaim'>;

/** How far into the deployer's nonces the registry's addresses may lie. */
const MAX_DEPLOY_NONCE = 32;

/**
 * The deployer's transactions, nonce by nonce, that put each contract where the registry names it:
 * the registry addresses are the deployer's contract addresses at some nonces (Garden's local
 * environment uses 0, 2 on one chain and 1, 6 on the other), FeeClaim takes the first nonce left,
 * and a nonce no contract takes is spent by an empty transfer.
 */
export function deployPlan(deployer: Address, expected: Record<RegistryContract, Address>): (ContractKey | 'skip')[] {
  const nonceOf = new Map<Address, number>();
  for (let nonce = 0; nonce < MAX_DEPLOY_NONCE; nonce++) nonceOf.set(getContractAddress({ from: deployer, nonce: BigInt(nonce) }), nonce);
  const plan: (ContractKey | 'skip')[] = [];
  for (const [key, address] of Object.entries(expected) as [RegistryContract, Address][]) {
    const nonce = nonceOf.get(address);
    if (nonce === undefined) throw new Error(`${key} at ${address}: not an address the deployer ${deployer} creates within its first ${MAX_DEPLOY_NONCE} transactions`);
    if (plan[nonce] !== undefined) throw new Error(`${key} and ${plan[nonce]} both sit at ${address}`);
    plan[nonce] = key;
  }
  const free = Array.from({ length: plan.length + 1 }, (_, nonce) => nonce).find((nonce) => plan[nonce] === undefined)!;
  plan[free] = 'feeClaim';
  return Array.from(plan, (step) => step ?? 'skip');
}

/**
 * Deploys the test tokens, HTLCs and FeeClaim from the deployer in the order `deployPlan` gives,
 * so their addresses are the ones the localnet registry names (checked, not assumed), then funds
 * the solver and the test user. A chain restarted from its saved state already has them: nothing
 * is redeployed.
 */
export async function deployLocalnet(chain: Chain, rpcUrl: string, chainId: number): Promise<EvmDeployment> {
  const transport = http(rpcUrl);
  const client = createPublicClient({ transport, pollingInterval: 50 });
  const deployer = devAccount('deployer');
  const wallet = createWalletClient({ account: deployer, transport, pollingInterval: 50, chain: { id: chainId, name: chain.key, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } } });
  const registryAddress = (symbol: string, part: 'htlc' | 'token') => {
    const address = chain.assets.find((a) => a.symbol === symbol)?.[part].address;
    if (!address) throw new Error(`the localnet registry has no ${part} address for ${chain.key}:${symbol}`);
    return getAddress(address);
  };
  const expected: Record<RegistryContract, Address> = {
    wbtc: registryAddress('wbtc', 'token'),
    usdc: registryAddress('usdc', 'token'),
    wbtcHtlc: registryAddress('wbtc', 'htlc'),
    usdcHtlc: registryAddress('usdc', 'htlc'),
    nativeHtlc: registryAddress('eth', 'htlc'),
  };
  const plan = deployPlan(deployer.address, expected);
  const feeClaim = getContractAddress({ from: deployer.address, nonce: BigInt(plan.indexOf('feeClaim')) });
  const contracts: EvmDeployment['contracts'] = { ...expected, feeClaim };

  const onChain = await Promise.all(Object.values(contracts).map((address) => client.getCode({ address })));
  if (onChain.every((code) => code !== undefined)) return { chain: chain.key, chainId, rpcUrl, contracts };
  if (onChain.some((code) => code !== undefined) || (await client.getTransactionCount({ address: deployer.address })) !== 0) {
    throw new Error(`the deployer on ${chain.key} has sent transactions before: the registry addresses cannot be reproduced (a chain an older version saved with other addresses: delete its state file, anvil-${chain.key}.json in the data directory, to start it afresh)`);
  }

  const constructorOf: Record<ContractKey, [string, unknown[]]> = {
    wbtc: ['TestToken', ['Wrapped Bitcoin (test)', 'WBTC', 8, deployer.address]],
    usdc: ['TestToken', ['USD Coin (test)', 'USDC', 6, deployer.address]],
    wbtcHtlc: ['HTLC', [expected.wbtc]],
    usdcHtlc: ['HTLC', [expected.usdc]],
    nativeHtlc: ['NativeHTLC', []],
    feeClaim: ['FeeClaim', [devAccount('feeSigner').address, deployer.address]],
  };
  for (const step of plan) {
    if (step === 'skip') {
      await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: deployer.address, value: 0n }) });
      continue;
    }
    const [name, args] = constructorOf[step];
    const { abi, bytecode } = contractArtifact(name);
    const receipt = await client.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode, args }) });
    if (!receipt.contractAddress || getAddress(receipt.contractAddress) !== contracts[step]) {
      throw new Error(`${chain.key}: ${step} deployed at ${receipt.contractAddress}, the registry says ${contracts[step]}`);
    }
  }
  for (const [who, wbtc, usdc] of [
    [devAccount('solver').address, '100', '10000000'],
    [devAccount('user').address, '10', '1000000'],
  ] as const) {
    await mintTestTokens(rpcUrl, contracts, who, { wbtc: parseUnits(wbtc, 8), usdc: parseUnits(usdc, 6) });
  }
  return { chain: chain.key, chainId, rpcUrl, contracts };
}

/** The deployer (the test tokens' owner) mints WBTC and USDC to `to`. */
async function mintTestTokens(rpcUrl: string, contracts: Pick<EvmDeployment['contracts'], 'wbtc' | 'usdc'>, to: Address, amounts: { wbtc: bigint; usdc: bigint }): Promise<void> {
  const transport = http(rpcUrl);
  const client = createPublicClient({ transport, pollingInterval: 50 });
  const wallet = createWalletClient({ account: devAccount('deployer'), transport, chain: undefined });
  const { abi } = contractArtifact('TestToken');
  for (const [token, amount] of [
    [contracts.wbtc, amounts.wbtc],
    [contracts.usdc, amounts.usdc],
  ] as const) {
    await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ chain: undefined, address: token, abi, functionName: 'mint', args: [to, amount] }) });
  }
}

/** How often the devnet's anvils save their state (they also save it on a clean exit). */
export const ANVIL_STATE_INTERVAL_SEC = 2;

/** Garden's local environment serves these chain ids on these ports, and its SDK's localnet chains expect them there. */
const GARDEN_LOCALNET_PORTS: Readonly<Record<number, number>> = { 31337: 8545, 31338: 8546 };

/**
 * An EVM chain of `hashlock dev`: an anvil node whose state is kept in the data directory (so a
 * restart resumes; saved every few seconds as well as on exit, so a crash loses seconds of chain),
 * the contracts and test tokens deployed with instant mining, then a block every `blockTimeMs`.
 * With `wellKnownPorts` it listens where Garden's local environment does, when that port is free.
 */
export const evmDevnet: FamilyDevnet = {
  async start(chain, options) {
    const chainId = Number(evmChainId(chain));
    const gardenPort = options.wellKnownPorts ? GARDEN_LOCALNET_PORTS[chainId] : undefined;
    const stateFile = join(options.dataDir, `anvil-${chain.key}.json`);
    // An anvil of this data directory that outlived an earlier run holds the port and the state file.
    const leftovers = await stopLeftovers(stateFile);
    // A leftover that held the port may release it a moment after it is stopped.
    const port = gardenPort !== undefined && (await portFreeWithin(gardenPort, leftovers.length > 0 ? 5_000 : 0)) ? gardenPort : undefined;
    const node = await startAnvil({ chainId, port, stateFile, stateIntervalSec: ANVIL_STATE_INTERVAL_SEC });
    try {
      const deployment = await deployLocalnet(chain, node.rpcUrl, chainId);
      if (options.blockTimeMs > 0) await node.rpc('evm_setIntervalMining', [Math.max(1, Math.round(options.blockTimeMs / 1000))]);
      const notes = [
        ...leftoverNotes(chain.key, leftovers),
        ...(gardenPort !== undefined && port === undefined ? [`port ${gardenPort} is taken, so ${chain.key} listens on ${node.port}: Garden's SDK, whose localnet expects ${gardenPort}, cannot reach it`] : []),
      ];
      return {
        chain,
        access: {
          rpc_url: node.rpcUrl,
          ws_url: node.rpcUrl.replace(/^http/, 'ws'),
          relayer: privateKeyToAccount(options.keys.relayer).address,
          fee_claim: deployment.contracts.feeClaim,
        },
        record: { chain_id: chainId, rpc_url: node.rpcUrl, contracts: deployment.contracts },
        describe: `${node.rpcUrl} (chain id ${chainId})`,
        notes,
        fund: async (key) => {
          const to = privateKeyToAccount(key).address;
          await node.rpc('anvil_setBalance', [to, `0x${parseUnits('1000', 18).toString(16)}`]);
          await mintTestTokens(node.rpcUrl, deployment.contracts, to, { wbtc: parseUnits('10', 8), usdc: parseUnits('1000000', 6) });
        },
        stop: () => node.stop(),
      };
    } catch (err) {
      await node.stop();
      throw err;
    }
  },
};
