import { join } from 'node:path';
import { createPublicClient, createWalletClient, getAddress, getContractAddress, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { contractArtifact } from './contracts.ts';
import type { Chain } from '../registry.ts';
import type { FamilyDevnet } from '../adapter.ts';
import { startAnvil } from './anvil.ts';
import { evmChainId } from './index.ts';
import { devAccount } from '../../devnet/accounts.ts';

export interface EvmDeployment {
  chain: string;
  chainId: number;
  rpcUrl: string;
  contracts: { wbtc: Address; usdc: Address; wbtcHtlc: Address; usdcHtlc: Address; nativeHtlc: Address; feeClaim: Address };
}

/**
 * Deploys the test tokens, HTLCs and FeeClaim from the deployer in a fixed order, so their
 * addresses are the ones the localnet registry names (checked, not assumed), then funds the solver
 * and the test user. A chain restarted from its saved state already has them: nothing is redeployed.
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
  const expected = {
    wbtc: registryAddress('wbtc', 'token'),
    usdc: registryAddress('usdc', 'token'),
    wbtcHtlc: registryAddress('wbtc', 'htlc'),
    usdcHtlc: registryAddress('usdc', 'htlc'),
    nativeHtlc: registryAddress('eth', 'htlc'),
  };

  const alreadyDeployed = (await client.getCode({ address: expected.nativeHtlc })) !== undefined;
  const deploy = async (name: string, args: unknown[]): Promise<Address> => {
    const { abi, bytecode } = contractArtifact(name);
    const hash = await wallet.deployContract({ abi, bytecode, args });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error(`deploying ${name} on ${chain.key} failed`);
    return getAddress(receipt.contractAddress);
  };

  let contracts: EvmDeployment['contracts'];
  if (alreadyDeployed) {
    contracts = { ...expected, feeClaim: await feeClaimAddress(client, deployer.address) };
  } else {
    if ((await client.getTransactionCount({ address: deployer.address })) !== 0) {
      throw new Error(`the deployer on ${chain.key} has sent transactions before: the registry addresses cannot be reproduced`);
    }
    // The order is the registry's: deployer nonces 0 to 5.
    const wbtc = await deploy('TestToken', ['Wrapped Bitcoin (test)', 'WBTC', 8, deployer.address]);
    const usdc = await deploy('TestToken', ['USD Coin (test)', 'USDC', 6, deployer.address]);
    const wbtcHtlc = await deploy('HTLC', [wbtc]);
    const usdcHtlc = await deploy('HTLC', [usdc]);
    const nativeHtlc = await deploy('NativeHTLC', []);
    const feeClaim = await deploy('FeeClaim', [devAccount('feeSigner').address, deployer.address]);
    contracts = { wbtc, usdc, wbtcHtlc, usdcHtlc, nativeHtlc, feeClaim };
    for (const [name, address] of Object.entries(expected)) {
      if (contracts[name as keyof typeof expected] !== address) {
        throw new Error(`${chain.key}: ${name} deployed at ${contracts[name as keyof typeof expected]}, the registry says ${address}`);
      }
    }
    const { abi } = contractArtifact('TestToken');
    const mint = async (token: Address, to: Address, amount: bigint) =>
      client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: token, abi, functionName: 'mint', args: [to, amount] }) });
    for (const [who, wbtc, usdc] of [
      [devAccount('solver').address, '100', '10000000'],
      [devAccount('user').address, '10', '1000000'],
    ] as const) {
      await mint(contracts.wbtc, who, parseUnits(wbtc, 8));
      await mint(contracts.usdc, who, parseUnits(usdc, 6));
    }
  }
  return { chain: chain.key, chainId, rpcUrl, contracts };
}

/** FeeClaim is the deployer's sixth contract (nonce 5). */
async function feeClaimAddress(client: ReturnType<typeof createPublicClient>, deployer: Address): Promise<Address> {
  const address = getContractAddress({ from: deployer, nonce: 5n });
  if ((await client.getCode({ address })) === undefined) throw new Error('FeeClaim is missing from the saved chain state');
  return address;
}

/** How often the devnet's anvils save their state (they also save it on a clean exit). */
export const ANVIL_STATE_INTERVAL_SEC = 2;

/**
 * An EVM chain of `hashlock dev`: an anvil node whose state is kept in the data directory (so a
 * restart resumes; saved every few seconds as well as on exit, so a crash loses seconds of chain),
 * the contracts and test tokens deployed with instant mining, then a block every `blockTimeMs`.
 */
export const evmDevnet: FamilyDevnet = {
  async start(chain, options) {
    const chainId = Number(evmChainId(chain));
    const node = await startAnvil({ chainId, stateFile: join(options.dataDir, `anvil-${chain.key}.json`), stateIntervalSec: ANVIL_STATE_INTERVAL_SEC });
    try {
      const deployment = await deployLocalnet(chain, node.rpcUrl, chainId);
      if (options.blockTimeMs > 0) await node.rpc('evm_setIntervalMining', [Math.max(1, Math.round(options.blockTimeMs / 1000))]);
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
        stop: () => node.stop(),
      };
    } catch (err) {
      await node.stop();
      throw err;
    }
  },
};
