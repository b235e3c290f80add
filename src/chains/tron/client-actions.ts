import { hashTypedData, type Hex, type TypedDataDefinition } from 'viem';
import { recoverDigestAddress } from '../secp256k1.ts';
import { AppError } from '../../errors.ts';
import type { Db } from '../../store/database.ts';
import type { Asset, Registry } from '../registry.ts';
import { HtlcClientActions, type HtlcActionsChain, type HtlcClientActionsDeps } from '../solidity-htlc/client-actions.ts';
import { tronToEvmHex } from './address.ts';
import { TRON_ACTION_BODIES } from './action-bodies.ts';
import { isNodeUnreachable } from './chain-errors.ts';
import type { TronHtlcReader } from './htlc-reads.ts';
import { tronChainId } from './order-id.ts';

/** The shared deps (the solver's key, the clock), and the chain's HTLC reader. */
export interface TronClientActionsDeps extends HtlcClientActionsDeps {
  reader: TronHtlcReader;
}

/** The order actions on one Tron chain: `HtlcClientActions` with base58 addresses. */
export type TronClientActions = HtlcClientActions<string>;

/**
 * The order actions on one Tron chain (`HtlcClientActions`, the same on every Solidity HTLC chain):
 * each checks the request against the stored order and the chain (the TIP-712 signature before
 * anything else), then writes the one relayer job of the order and action, which the chain's relayer
 * sender signs and pays the energy of. What is Tron's own: base58 addresses in jobs (20-byte in the
 * VM and the typed data), reads by constant calls at the head, and ECDSA initiators only.
 */
export function tronClientActions(db: Db, registry: Registry, deps: TronClientActionsDeps): TronClientActions {
  return new HtlcClientActions(db, registry, tronActionsChain(deps.reader), TRON_ACTION_BODIES, deps);
}

function tronActionsChain(reader: TronHtlcReader): HtlcActionsChain<string> {
  return {
    chainId: (asset) => tronChainId(asset.chain.id),
    vm: (address) => tronToEvmHex(address),
    jobAddress: (address) => address,
    async readOrder(asset, orderId) {
      const onChain = await unavailableIfDown(asset, () => reader.order(asset.htlc.address, orderId));
      return { ...onChain, initiated: Boolean(onChain.initiator) };
    },
    head: async (asset) => (await unavailableIfDown(asset, () => reader.api.nowBlock())).number,
    checkInitiatorSignature: (_asset, initiator, typedData, signature, what) => checkSignature(typedData, signature, initiator, what),
  };
}

async function unavailableIfDown<T>(asset: Asset, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('chain_unavailable', `cannot read the HTLC on ${asset.chain.key}${isNodeUnreachable(err) ? ': its node is out of reach' : ''}`, { cause: err });
  }
}

/**
 * `party` (base58) signed `typedData` by ECDSA (TIP-712 = EIP-712 over 20-byte addresses), checked
 * before anything is written or sent. Contract initiators (TIP-1271) are not accepted here.
 */
async function checkSignature(typedData: TypedDataDefinition, signature: Hex, party: string, what: string): Promise<void> {
  let signer: string;
  try {
    signer = await recoverDigestAddress(hashTypedData(typedData), signature);
  } catch {
    throw new AppError('invalid_signature', "invalid body field 'signature': not a valid secp256k1 signature");
  }
  const expected = tronToEvmHex(party);
  if (signer !== expected) {
    throw new AppError('invalid_signature', `invalid body field 'signature': not signed by the source initiator ${party} over ${what}`);
  }
}
