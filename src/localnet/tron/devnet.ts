import { join } from 'node:path';
import { encodeDeployData, encodeFunctionData, getContractAddress, hexToBytes, numberToHex, parseUnits, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmHexToTron, tronToEvmHex } from '../../chains/tron/address.ts';
import { tronDeployer } from '../../chains/tron/deploy.ts';
import type { Chain } from '../../chains/registry.ts';
import { devAccount, privateKeyOf } from '../accounts.ts';
import { portIsFree } from '../free-port.ts';
import type { FamilyDevnet } from '../local-chain.ts';
import { leftoverNotes, stopLeftovers } from '../node-process.ts';
import { WEI_PER_SUN } from './chain.ts';
import { tronContractArtifact } from './contracts.ts';
import { LOCAL_TRON_CHAIN_ID, LOCAL_TRON_EVM_CHAIN_ID, startTronLocalnet, type TronLocalnet } from './local-chain.ts';

/** java-tron's full-node HTTP port, where Tron tools look for a local node. */
const WELL_KNOWN_PORT = 8090;
const TRX = 1_000_000n;
/** TRX each account gets on a new chain, in SUN. */
const TRX_FUNDS: Record<'solver' | 'relayer' | 'user', bigint> = { solver: 100_000n * TRX, relayer: 100_000n * TRX, user: 10_000n * TRX };
/** Test USDT (6 decimals), whole tokens: the solver's liquidity and the user's. */
const USDT_FUNDS: Record<'solver' | 'user', string> = { solver: '10000000', user: '1000000' };

export interface TronDeployment {
  /** The test USDT and its HTLC, base58. */
  usdt: string;
  usdtHtlc: string;
}

/** Sends an EVM transaction from an unlocked anvil account, mines it and checks that it succeeded. */
async function sendMined(localnet: TronLocalnet, tx: { from: Hex; to?: Hex; data: Hex }): Promise<{ contractAddress: Hex | null }> {
  const rpc = (method: string, params: unknown[]) => localnet.chain.anvil.rpc(method, params);
  const hash = await rpc('eth_sendTransaction', [tx]);
  await localnet.mine();
  const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as { status: Hex; contractAddress: Hex | null };
  if (Number(receipt.status) !== 1) throw new Error(`the deployment transaction ${String(hash)} reverted`);
  return receipt;
}

/**
 * Deploys the test USDT and the Tron HTLC from the deployer at its nonces 0 and 1, where the registry
 * names them, and funds the solver, the relayer and the test user with TRX and USDT. They are placed by
 * the EVM's rules: a Tron creation cannot land at an address named in advance (its address comes from
 * the transaction's id, which covers its reference block, expiration and timestamp). `hashlock deploy`'s
 * Tron deployer then finds the HTLC where the registry names it, by its code and `token()` through the
 * HTTP API, as it would on any chain. A chain restarted from its saved state has them already: nothing
 * is redeployed.
 */
export async function deployTronLocalnet(chain: Chain, localnet: TronLocalnet): Promise<TronDeployment> {
  const asset = chain.assets.find((a) => a.symbol === 'usdt');
  if (!asset?.token.address || !asset.htlc.address) throw new Error(`the registry names no usdt token and HTLC on ${chain.key}`);
  const deployment = { usdt: asset.token.address, usdtHtlc: asset.htlc.address };
  const rpc = (method: string, params: unknown[]) => localnet.chain.anvil.rpc(method, params);
  const deployer = devAccount('deployer').address;
  const planned = [0n, 1n].map((nonce) => evmHexToTron(getContractAddress({ from: deployer, nonce })));
  if (planned[0] !== deployment.usdt || planned[1] !== deployment.usdtHtlc) {
    throw new Error(`${chain.key}: the registry's usdt ${deployment.usdt} and HTLC ${deployment.usdtHtlc} are not the deployer's first two contracts (${planned.join(', ')})`);
  }
  const codes = await Promise.all([deployment.usdt, deployment.usdtHtlc].map((a) => rpc('eth_getCode', [tronToEvmHex(a), 'latest']) as Promise<Hex>));
  if (codes.some((code) => code === '0x')) await placeAndFund(chain.key, localnet, deployment);
  const found = await tronDeployer({
    chain,
    access: { rpc_url: localnet.url },
    deployerKey: hexToBytes(privateKeyOf(devAccount('deployer'))),
    assets: [asset],
    previous: undefined,
    wholeChain: false,
    options: {},
    log: () => {},
  });
  if (found.contracts[0]?.address !== deployment.usdtHtlc) throw new Error(`${chain.key}: the Tron deployer found the usdt HTLC at ${found.contracts[0]?.address}, not at ${deployment.usdtHtlc}`);
  return deployment;
}

/** The deployer's first two contracts (the USDT and its HTLC) on a new chain, and the dev accounts' TRX and USDT. */
async function placeAndFund(chainKey: string, localnet: TronLocalnet, deployment: TronDeployment): Promise<void> {
  const rpc = (method: string, params: unknown[]) => localnet.chain.anvil.rpc(method, params);
  const deployer = devAccount('deployer').address;
  if (Number(await rpc('eth_getTransactionCount', [deployer, 'latest'])) !== 0) {
    throw new Error(`the deployer on ${chainKey} has sent transactions before: delete its state (anvil-${chainKey}.json and tron-${chainKey}.json in the data directory) to start it afresh`);
  }
  const token = tronContractArtifact('TestToken');
  const htlc = tronContractArtifact('TronHTLC');
  await sendMined(localnet, { from: deployer, data: encodeDeployData({ abi: token.abi, bytecode: token.bytecode, args: ['Tether USD (test)', 'USDT', 6, deployer] }) });
  await sendMined(localnet, { from: deployer, data: encodeDeployData({ abi: htlc.abi, bytecode: htlc.bytecode, args: [tronToEvmHex(deployment.usdt)] }) });
  for (const [role, sun] of Object.entries(TRX_FUNDS) as [keyof typeof TRX_FUNDS, bigint][]) {
    await rpc('anvil_setBalance', [devAccount(role).address, numberToHex(sun * WEI_PER_SUN)]);
  }
  for (const [role, amount] of Object.entries(USDT_FUNDS) as [keyof typeof USDT_FUNDS, string][]) {
    const data = encodeFunctionData({ abi: token.abi, functionName: 'mint', args: [devAccount(role).address, parseUnits(amount, 6)] });
    await sendMined(localnet, { from: deployer, to: tronToEvmHex(deployment.usdt), data });
  }
}

/**
 * The Tron chain of `hashlock dev`: the local Tron chain (anvil behind Tron's HTTP API and transaction
 * rules, `./local-chain.ts`), a block every `blockTimeMs`, its state in the data directory, with the
 * test USDT and its HTLC deployed and the dev accounts funded.
 */
export const tronDevnet: FamilyDevnet = {
  async start(chain, options) {
    // An anvil of this data directory that outlived an earlier run holds the state file.
    const leftovers = await stopLeftovers(join(options.dataDir, `anvil-${chain.key}.json`));
    const port = options.wellKnownPorts && (await portIsFree(WELL_KNOWN_PORT)) ? WELL_KNOWN_PORT : undefined;
    const localnet = await startTronLocalnet({ dataDir: options.dataDir, name: chain.key, port, blockTimeMs: options.blockTimeMs, solidifyDepth: chain.confirmationTarget });
    try {
      const deployment = await deployTronLocalnet(chain, localnet);
      const tron = (key: Hex) => ({ tron: { address: evmHexToTron(privateKeyToAccount(key).address) } });
      const notes = [
        ...leftoverNotes(chain.key, leftovers),
        ...(options.wellKnownPorts && port === undefined ? [`port ${WELL_KNOWN_PORT} is taken, so ${chain.key} listens on ${localnet.port}`] : []),
      ];
      return {
        chain,
        access: { rpc_url: localnet.url, relayer: evmHexToTron(privateKeyToAccount(options.keys.relayer).address) },
        record: { api_url: localnet.url, chain_id: LOCAL_TRON_CHAIN_ID, evm_chain_id: LOCAL_TRON_EVM_CHAIN_ID, contracts: deployment },
        accounts: { user: tron(options.keys.user), solver: tron(options.keys.solver) },
        describe: `${localnet.url} (Tron's HTTP API over anvil, chain id ${LOCAL_TRON_CHAIN_ID}, ${options.blockTimeMs > 0 ? `a block every ${options.blockTimeMs} ms` : 'a block per transaction'})`,
        notes,
        advance: (blocks) => localnet.mine(blocks),
        stop: () => localnet.stop(),
      };
    } catch (err) {
      await localnet.stop();
      throw err;
    }
  },
};
