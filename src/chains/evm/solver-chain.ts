import { createPublicClient, erc20Abi, getAddress, http, isAddressEqual, maxUint256, toHex, type Address, type PublicClient } from 'viem';
import type { Db } from '../../store/database.ts';
import { nextUnusedNonce } from '../../store/signed-txs.ts';
import type { Asset, Chain, Registry } from '../registry.ts';
import { HtlcSolverChain, type HtlcSolverAccess } from '../solidity-htlc/solver-chain.ts';
import { describeChainError } from './chain-errors.ts';
import { readHtlcOrder, ZERO_ADDRESS } from './htlc-reads.ts';
import { evmChainId } from './index.ts';
import type { JobPayload } from './jobs.ts';
import { evmOrderId } from './order-id.ts';

/** The solver on one EVM chain: `HtlcSolverChain` with checksummed addresses. */
export type EvmSolverChain = HtlcSolverChain<Address, JobPayload>;

/**
 * The solver on one EVM chain (`HtlcSolverChain`, the same decisions on every Solidity HTLC chain):
 * reads HTLC orders from the registry's contracts over the node's pending state, in batched JSON-RPC
 * requests, and writes jobs that the chain's solver sender signs and broadcasts with consecutive
 * nonces. What is the EVM's own: checksummed addresses, and native ether HTLCs (no token, no
 * approval: the funding carries the value).
 */
export function evmSolverChain(chain: Chain, registry: Registry, address: Address, rpcUrl: string, db: Db): EvmSolverChain {
  if (chain.family !== 'evm') throw new Error(`${chain.key} is not an EVM chain`);
  // Batched: the reads of the orders a pass handles at once travel in one HTTP request.
  const client = createPublicClient({ transport: http(rpcUrl, { batch: true }), cacheTime: 0 });
  // viem's errors repeat the call's arguments: a revert is shown by its error name, a long hex string cut.
  return new HtlcSolverChain(chain, registry, getAddress(address), evmSolverAccess(chain, client, getAddress(address), db), db, describeChainError);
}

function evmSolverAccess(chain: Chain, client: PublicClient, solver: Address, db: Db): HtlcSolverAccess<Address, JobPayload> {
  const tokens = new Map<Address, Promise<Address>>();
  let headRead: Promise<bigint> | undefined;
  let poolRead: Promise<boolean> | undefined;
  const native = (asset: Asset) => asset.token.schema === 'evm:native';
  return {
    party: (address) => getAddress(address),
    same: (a, b) => isAddressEqual(a, b),
    orderId: (t) => evmOrderId({ ...t, chainId: evmChainId(chain), secretHash: `0x${t.secretHash}` }).slice(2).toLowerCase(),
    async order(htlc, orderId, pending) {
      const onChain = await readHtlcOrder(client, htlc, orderId, pending ? 'pending' : undefined);
      return { ...onChain, initiator: onChain.initiator === ZERO_ADDRESS ? undefined : onChain.initiator };
    },
    /**
     * The chain's head. Callers at the same moment share one read in flight (a pass checks many
     * orders at once), so a caller may get a read that started at most one round trip before its
     * call; nothing is cached beyond that. Rule 2's 300 s margin dwarfs the block this may miss.
     */
    head() {
      if (!headRead) {
        headRead = client.getBlockNumber({ cacheTime: 0 });
        const clear = () => (headRead = undefined);
        headRead.then(clear, clear);
      }
      return headRead;
    },
    /**
     * The pool holds nonces from the account's mined count up to its pending count; the jobs signed
     * and unsettled here hold every nonce below `nextUnusedNonce`. A pending nonce above both is a
     * transaction no job here knows. Shared by callers at the same moment, as `head` is.
     */
    foreignPending() {
      if (!poolRead) {
        poolRead = Promise.all([
          client.getTransactionCount({ address: solver, blockTag: 'pending' }),
          client.getTransactionCount({ address: solver, blockTag: 'latest' }),
          nextUnusedNonce(db, chain.key, 'solver'),
        ]).then(([pending, mined, held]) => pending > mined && BigInt(pending) > (held ?? 0n));
        const clear = () => (poolRead = undefined);
        poolRead.then(clear, clear);
      }
      return poolRead;
    },
    /** The token an ERC-20 HTLC locks (fixed at its deployment: read once). */
    token(htlc) {
      let token = tokens.get(htlc);
      if (!token) {
        token = client.readContract({ address: htlc, abi: tokenAbi, functionName: 'token' });
        token.catch(() => tokens.delete(htlc));
        tokens.set(htlc, token);
      }
      return token;
    },
    allowance: (token, owner, spender) => client.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [owner, spender] }),
    unlimited: maxUint256 / 2n,
    locksToken: (asset) => !native(asset),
    fundJob: (fund, dst) => ({ ...fund, value: toHex(native(dst.asset) ? BigInt(fund.amount) : 0n) }),
    approvalPending: (htlc) => `waiting for the solver's approval of ${htlc} to be mined`,
  };
}

/** The solver's adapters for the EVM chains it has an RPC for. */
export function evmSolverChains(registry: Registry, address: Address, rpcUrls: Readonly<Record<string, string>>, db: Db): EvmSolverChain[] {
  return Object.entries(rpcUrls).flatMap(([key, url]) => {
    const chain = registry.chain(key);
    return chain?.family === 'evm' ? [evmSolverChain(chain, registry, address, url, db)] : [];
  });
}

const tokenAbi = [{ type: 'function', name: 'token', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] }] as const;
