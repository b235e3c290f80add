import { getAddress, hashTypedData, type Address, type Hex, type PublicClient, type TypedDataDefinition } from 'viem';
import { recoverDigestAddress } from '../secp256k1.ts';
import { AppError } from '../../errors.ts';
import type { Db } from '../../store/database.ts';
import type { Asset, Registry } from '../registry.ts';
import { HtlcClientActions, type HtlcActionsChain, type HtlcClientActionsDeps } from '../solidity-htlc/client-actions.ts';
import { EVM_ACTION_BODIES } from './action-bodies.ts';
import { readHtlcOrder, ZERO_ADDRESS } from './htlc-reads.ts';
import { evmChainId } from './index.ts';

/** The shared deps (the solver's key, the clock), and a read client of the chain (HTLC state, current block). */
export interface EvmClientActionsDeps extends HtlcClientActionsDeps {
  client: PublicClient;
}

const SIGNATURE = /^(0x)?([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/;

/** The order actions on one EVM chain: `HtlcClientActions` with checksummed addresses. */
export type EvmClientActions = HtlcClientActions<Address>;

/**
 * The order actions on one EVM chain (`HtlcClientActions`, the same on every Solidity HTLC chain):
 * each checks the request against the stored order and the chain, then writes the one relayer job of
 * the order and action, which the chain's relayer sender signs and pays for. What is the EVM's own:
 * checksummed addresses, reads at a block through JSON-RPC, ERC-1271 initiators, and native ether
 * sources, which cannot be pulled with a signature.
 */
export function evmClientActions(db: Db, registry: Registry, deps: EvmClientActionsDeps): EvmClientActions {
  return new HtlcClientActions(db, registry, evmActionsChain(deps.client), EVM_ACTION_BODIES, deps);
}

function evmActionsChain(client: PublicClient): HtlcActionsChain<Address> {
  return {
    chainId: (asset) => evmChainId(asset.chain),
    vm: (address) => getAddress(address),
    jobAddress: (address) => getAddress(address),
    async readOrder(asset, orderId, at) {
      try {
        const onChain = await readHtlcOrder(client, getAddress(asset.htlc.address), orderId, at);
        return { ...onChain, initiated: onChain.initiator !== ZERO_ADDRESS };
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw new AppError('chain_unavailable', `cannot read the HTLC on ${asset.chain.key}`, { cause: err });
      }
    },
    head: () => client.getBlockNumber(),
    checkInitiatorSignature: (asset, initiator, typedData, signature, what) => checkInitiatorSignature(client, asset, getAddress(initiator), typedData, signature, what),
    refuseInitiate(asset) {
      if (asset.token.schema === 'evm:native') {
        throw new AppError('not_supported', 'initiate: the source is native ether, which cannot be pulled with a signature: broadcast initiate_transaction yourself');
      }
    },
  };
}

/**
 * The initiator signed `typedData`: an account by ECDSA, a contract (a Safe, a smart account) by
 * answering ERC-1271's isValidSignature, as the HTLC itself checks. With the node out of reach, an
 * ECDSA signature by the initiator is accepted (the HTLC checks again when the job is sent, and a
 * contract initiator's refusal then fails the job with the reason); any other is a 503.
 */
async function checkInitiatorSignature(client: PublicClient, asset: Asset, initiator: Address, typedData: TypedDataDefinition, signature: Hex, what: string): Promise<void> {
  let code: Hex | undefined;
  try {
    code = await client.getCode({ address: initiator });
  } catch (err) {
    const signer = SIGNATURE.test(signature) ? await recoverDigestAddress(hashTypedData(typedData), signature).catch(() => undefined) : undefined;
    if (signer === initiator) return;
    throw new AppError('chain_unavailable', `cannot read the initiator on ${asset.chain.key}`, { cause: err });
  }
  if (code && code !== '0x') {
    const accepted = await client.verifyTypedData({ ...typedData, address: initiator, signature }).catch(() => false);
    if (!accepted) throw new AppError('invalid_signature', `invalid body field 'signature': the initiator contract ${initiator} does not accept it for ${what} (ERC-1271)`);
    return;
  }
  if (!SIGNATURE.test(signature)) throw new AppError('invalid_signature', `invalid body field 'signature': must be a 65-byte ECDSA signature in hex`);
  let signer: Address;
  try {
    signer = await recoverDigestAddress(hashTypedData(typedData), signature);
  } catch {
    throw new AppError('invalid_signature', "invalid body field 'signature': not a valid ECDSA signature");
  }
  if (signer !== initiator) {
    throw new AppError('invalid_signature', `invalid body field 'signature': signed by ${signer}, not by the source initiator ${initiator} over ${what}`);
  }
}
