// A local EVM chain for the affiliate claim tests: anvil with the localnet contracts deployed and the
// FeeClaim contract funded with test USDC by the operator (the deployer).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createPublicClient, createWalletClient, http, type PublicClient } from 'viem';
import { ClaimSigner } from '../../src/affiliates/claims.ts';
import { buildApi } from '../../src/api/app.ts';
import type { Registry } from '../../src/chains/registry.ts';
import { contractArtifact } from '../../src/chains/evm/contracts.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { deployLocalnet, type EvmDeployment } from '../../src/localnet/evm/devnet.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import type { Store } from '../../src/store/database.ts';
import { TEST_PRICES } from './api.ts';

/** viem's description of the local chain at `rpcUrl`, for wallet clients. */
export const localChain = (rpcUrl: string) => ({ id: 31337, name: 'ethereum_localnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });

export async function startFeeClaimChain(registry: Registry, chainKey: string): Promise<{ node: AnvilNode; deployment: EvmDeployment; client: PublicClient }> {
  const node = await startAnvil({ chainId: 31337 });
  const deployment = await deployLocalnet(registry.chain(chainKey)!, node.rpcUrl, 31337);
  const client = createPublicClient({ transport: http(node.rpcUrl), cacheTime: 0 });
  const deployer = createWalletClient({ account: devAccount('deployer'), chain: localChain(node.rpcUrl), transport: http(node.rpcUrl) });
  const hash = await deployer.writeContract({
    address: deployment.contracts.usdc,
    abi: contractArtifact('TestToken').abi,
    functionName: 'mint',
    args: [deployment.contracts.feeClaim, 1_000_000_000n],
  });
  assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  return { node, deployment, client };
}

/**
 * The API with the fee signer's claims on that chain's FeeClaim, read through its node; with `keyless`,
 * an API instance's: it holds no key and serves the claims workers stored.
 */
export function apiWithClaims(store: Store, registry: Registry, chainKey: string, chain: { node: AnvilNode; deployment: EvmDeployment }, options: { keyless?: boolean } = {}) {
  return buildApi({
    store,
    registry,
    prices: new StaticPriceSource(TEST_PRICES),
    secrets: new SecretBox(randomBytes(32)),
    version: 'test',
    claims: new ClaimSigner(registry, {
      ...(options.keyless ? {} : { feeSignerKey: privateKeyOf(devAccount('feeSigner')) }),
      contracts: { [chainKey]: chain.deployment.contracts.feeClaim },
      rpcUrls: { [chainKey]: chain.node.rpcUrl },
      db: store.db,
    }),
  });
}
