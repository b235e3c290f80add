import { join } from 'node:path';
import { createPublicClient, createWalletClient, getAddress, getContractAddress, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { contractArtifact } from '../../chains/evm/contracts.ts';
import type { Chain } from '../../chains/registry.ts';
import type { FamilyDevnet } from '../local-chain.ts';
import { startAnvil } from './anvil.ts';
import { evmChainId } from '../../chains/evm/index.ts';
import { devAccount, privateKeyOf } from '../accounts.ts';
import { deployEvmSteps, type EvmContractStep } from '../../chains/evm/deploy.ts';
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
 * The nonce of the deployer at which each contract lands where the registry names it: the registry
 * addresses are the deployer's contract addresses at some nonces (Garden's local environment uses 0, 2
 * on one chain and 1, 6 on the other), and FeeClaim takes the first nonce left.
 */
export function deployPlan(deployer: Address, expected: Record<RegistryContract, Address>): Record<ContractKey, number> {
  const nonceOf = new Map<Address, number>();
  for (let nonce = 0; nonce < MAX_DEPLOY_NONCE; nonce++) nonceOf.set(getContractAddress({ from: deployer, nonce: BigInt(nonce) }), nonce);
  const plan: Partial<Record<ContractKey, number>> = {};
  const taken = new Map<number, ContractKey>();
  for (const [key, address] of Object.entries(expected) as [RegistryContract, Address][]) {
    const nonce = nonceOf.get(address);
    if (nonce === undefined) throw new Error(`${key} at ${address}: not an address the deployer ${deployer} creates within its first ${MAX_DEPLOY_NONCE} transactions`);
    if (taken.has(nonce)) throw new Error(`${key} and ${taken.get(nonce)} both sit at ${address}`);
    taken.set(nonce, key);
    plan[key] = nonce;
  }
  plan.feeClaim = Array.from({ length: taken.size + 1 }, (_, nonce) => nonce).find((nonce) => !taken.has(nonce))!;
  return plan as Record<ContractKey, number>;
}

/**
 * Deploys the test tokens, HTLCs and FeeClaim through `hashlock deploy`'s EVM code, each at the
 * deployer's nonce `deployPlan` gives (so their addresses are the ones the localnet registry names),
 * then funds the solver and the test user. A chain restarted from its saved state already has them:
 * they are found by their code, and nothing is redeployed.
 */
export async function deployLocalnet(chain: Chain, rpcUrl: string, chainId: number): Promise<EvmDeployment> {
  const deployer = devAccount('deployer');
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
  const contracts: EvmDeployment['contracts'] = { ...expected, feeClaim: getContractAddress({ from: deployer.address, nonce: BigInt(plan.feeClaim) }) };
  const asset = (symbol: string) => [`${chain.key}:${symbol}`];
  const steps: Record<ContractKey, EvmContractStep> = {
    wbtc: { contract: 'TestToken', args: ['Wrapped Bitcoin (test)', 'WBTC', 8, deployer.address], assets: [] },
    usdc: { contract: 'TestToken', args: ['USD Coin (test)', 'USDC', 6, deployer.address], assets: [] },
    wbtcHtlc: { contract: 'HTLC', args: [expected.wbtc], assets: asset('wbtc') },
    usdcHtlc: { contract: 'HTLC', args: [expected.usdc], assets: asset('usdc') },
    nativeHtlc: { contract: 'NativeHTLC', args: [], assets: asset('eth') },
    feeClaim: { contract: 'FeeClaim', args: [devAccount('feeSigner').address, deployer.address], assets: [] },
  };
  const ordered = (Object.keys(steps) as ContractKey[]).sort((a, b) => plan[a] - plan[b]);
  const fresh = (await createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: deployer.address })) === 0;
  try {
    await deployEvmSteps({ rpcUrl, chainId, deployerKey: privateKeyOf(deployer) }, ordered.map((key) => ({ ...steps[key], at: contracts[key] })));
  } catch (err) {
    if (fresh) throw err;
    throw new Error(`the deployer on ${chain.key} has sent other transactions before: the registry addresses cannot be reproduced (a chain an older version saved with other addresses: delete its state file, anvil-${chain.key}.json in the data directory, to start it afresh)`, { cause: err });
  }
  if (fresh) {
    for (const [who, wbtc, usdc] of [
      [devAccount('solver').address, '100', '10000000'],
      [devAccount('user').address, '10', '1000000'],
    ] as const) {
      await mintTestTokens(rpcUrl, contracts, who, { wbtc: parseUnits(wbtc, 8), usdc: parseUnits(usdc, 6) });
    }
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
