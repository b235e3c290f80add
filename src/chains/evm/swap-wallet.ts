// The EVM side of `hashlock swap`: the test user's account on one of the devnet's EVM chains, its
// balance of the swap's asset, and the source's initiate (gasless by an EIP-712 signature for an
// ERC-20, its own transaction for ether).
import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { isNativeAsset, relayedInitiate, SwapError, type ApiEvmTx, type CreatedOrder, type SwapStep, type SwapWallet, type SwapWalletInput } from '../swap-wallet.ts';

/** The user's side of a swap on an EVM chain of the devnet; the service redeems a destination to the user. */
export function evmSwapWallet(input: SwapWalletInput): SwapWallet {
  const { chainKey, chain, asset, flag } = input;
  const chainId = chain?.chain_id;
  if (!chain?.rpc_url || typeof chainId !== 'number') {
    throw new SwapError(`${flag} ${asset.id}: its chain ${chainKey} is not a chain of this devnet (devnet.json has no ${chainKey}): restart npm start`);
  }
  const viemChain = { id: chainId, name: chainKey, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [chain.rpc_url] } } };
  const user = privateKeyToAccount(input.user.private_key as Hex);
  const client: PublicClient = createPublicClient({ chain: viemChain, transport: http(chain.rpc_url), pollingInterval: 100 });
  const wallet = createWalletClient({ account: user, chain: viemChain, transport: http(chain.rpc_url) });
  const send = async (what: string, tx: ApiEvmTx, print: (line: string) => void): Promise<Hex> => {
    const hash = await wallet.sendTransaction({
      to: tx.to,
      data: tx.data,
      ...(tx.value && BigInt(tx.value) > 0n ? { value: BigInt(tx.value) } : {}),
      ...(tx.gas_limit ? { gas: BigInt(tx.gas_limit) } : {}),
    });
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 60_000 });
    if (receipt.status !== 'success') throw new SwapError(`${what} transaction ${hash} reverted`);
    print(`  ${what}: ${hash} (block ${receipt.blockNumber})`);
    return hash;
  };
  return {
    owner: user.address,
    balance: () =>
      isNativeAsset(asset)
        ? client.getBalance({ address: user.address })
        : client.readContract({ address: asset.token.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [user.address] }),
    async initiate(created: CreatedOrder, step: SwapStep) {
      const orderId = created.order_id;
      const approval = created.approval_transaction;
      const typedData = created.typed_data;
      if (!isNativeAsset(asset) && typedData) {
        if (approval) await send('approval', approval, step.print);
        const signature = await user.signTypedData({
          domain: { ...typedData.domain, chainId: BigInt(typedData.domain.chainId) },
          types: { Initiate: typedData.types.Initiate },
          primaryType: 'Initiate',
          message: { ...typedData.message, timelock: BigInt(typedData.message.timelock), amount: BigInt(typedData.message.amount) },
        });
        const txHash = await relayedInitiate(step, orderId, { signature });
        step.print(`  initiate (gasless, relayed): ${txHash}`);
        return '';
      }
      const initiate = created.initiate_transaction;
      if (!initiate) throw new SwapError(`order ${orderId}: the service returned no initiate_transaction for ${asset.id}`);
      if (approval) await send('approval', approval, step.print);
      await send('initiate', initiate, step.print);
      return '';
    },
  };
}
