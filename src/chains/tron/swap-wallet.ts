// The Tron side of `hashlock swap`: the test user's account on the devnet's Tron chain (its EVM key,
// whose address is the same 20 bytes under Tron's 0x41 prefix), its TRX and TRC-20 balances, and the
// source's initiate: the approval signed offline and broadcast to the node, then the gasless TIP-712
// initiate the relayer sends (or, without typed data, the order's own initiate transaction).
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { isNativeAsset, relayedInitiate, SwapError, type ApiEvmTx, type CreatedOrder, type SwapStep, type SwapWallet, type SwapWalletInput } from '../swap-wallet.ts';
import { TronApi } from './api.ts';
import { TronHtlcReader } from './htlc-reads.ts';
import { tronAddressOfKey } from './runtime.ts';
import { hex41, signTronCall } from './transactions.ts';

/** How long a transaction of the user stays valid, as wallets set it. */
const EXPIRATION_MS = 60_000;
/** The most SUN a user transaction may burn for energy when the API names no `gas_limit`. */
const FEE_LIMIT_SUN = 150_000_000n;

/** The user's wallet on a Tron chain of the devnet. */
export function tronSwapWallet(input: SwapWalletInput): SwapWallet {
  const { chainKey, chain, asset, flag } = input;
  const apiUrl = chain?.api_url;
  if (typeof apiUrl !== 'string') {
    throw new SwapError(`${flag} ${asset.id}: its chain ${chainKey} is not a chain of this devnet (devnet.json has no ${chainKey}): restart npm start`);
  }
  const key = input.user.private_key as Hex;
  const owner = tronAddressOfKey(key);
  const tron = new TronApi(apiUrl);
  const reader = new TronHtlcReader(tron);

  /** Signs `tx` as the user, broadcasts it and waits until its block holds it; returns the TRX it burnt. */
  const send = async (what: string, tx: ApiEvmTx, step: SwapStep): Promise<bigint> => {
    const head = await tron.nowBlock();
    const signed = await signTronCall({
      call: { contract: tx.to, data: tx.data },
      owner,
      privateKey: key,
      reference: head,
      expiration: head.timestampMs + EXPIRATION_MS,
      feeLimitSun: tx.gas_limit ? BigInt(tx.gas_limit) : FEE_LIMIT_SUN,
    });
    const answer = await tron.broadcast(signed as unknown as Record<string, unknown>);
    if (!answer.result) throw new SwapError(`${what}: the node refused transaction ${signed.txID} (${answer.code ?? ''} ${answer.message ?? ''})`);
    for (;;) {
      const info = await tron.transactionInfo(signed.txID);
      if (info) {
        if (info.failed) throw new SwapError(`${what} transaction ${signed.txID} failed: ${info.result} ${info.message ?? ''}`);
        step.print(`  ${what}: ${signed.txID} (block ${info.blockNumber}, fee ${info.feeSun} SUN)`);
        return info.feeSun;
      }
      if (Date.now() > step.deadline) throw new SwapError(`${what} transaction ${signed.txID} is in no block after the deadline`);
      await new Promise((r) => setTimeout(r, step.pollMs));
    }
  };

  return {
    owner,
    async balance() {
      try {
        return isNativeAsset(asset) ? await tron.balanceSun(hex41(owner)) : await reader.trc20Balance(asset.token.address, owner);
      } catch (err) {
        throw new SwapError(`cannot read the balance on ${chainKey} (${(err as Error).message}): is npm start running?`);
      }
    },
    async initiate(created: CreatedOrder, step: SwapStep) {
      const orderId = created.order_id;
      const approvalFee = created.approval_transaction ? await send('approval', created.approval_transaction, step) : 0n;
      const approvalNote = created.approval_transaction ? `; the approval burnt ${approvalFee} SUN of TRX` : '';
      const typedData = created.typed_data;
      if (typedData) {
        // TIP-712 is EIP-712 with the domain's chain id masked to 32 bits and 20-byte addresses, as served.
        const signature = await privateKeyToAccount(key).signTypedData({
          domain: { ...typedData.domain, chainId: BigInt(typedData.domain.chainId) },
          types: { Initiate: typedData.types.Initiate },
          primaryType: 'Initiate',
          message: { ...typedData.message, timelock: BigInt(typedData.message.timelock), amount: BigInt(typedData.message.amount) },
        });
        const txId = await relayedInitiate(step, orderId, { signature });
        step.print(`  initiate (gasless, relayed): ${txId}`);
        return `  (the amount${approvalNote}; the relayer paid the initiate's energy)`;
      }
      if (!created.initiate_transaction) throw new SwapError(`order ${orderId}: the service returned no initiate_transaction for ${asset.id}`);
      const initiateFee = await send('initiate', created.initiate_transaction, step);
      return `  (the amount${approvalNote}; the initiate burnt ${initiateFee} SUN of TRX)`;
    },
  };
}
