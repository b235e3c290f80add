import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, keccak256, type Abi, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import type { TronBlockHeader } from './api.ts';
import { transactionHeader } from './transactions.ts';

/**
 * The address a CreateSmartContract transaction's contract gets, as java-tron computes it
 * (`WalletUtil.generateContractAddress`): keccak256 of the txID's 32 bytes followed by the owner's 21-byte
 * address, its last 20 bytes behind the 0x41 prefix. Addresses are 41-prefixed hex, no 0x.
 */
export function tronContractAddress(txId: string, owner41: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(txId)) throw new Error(`txID: ${JSON.stringify(txId)} is not 32 bytes of hex`);
  if (!/^41[0-9a-fA-F]{40}$/.test(owner41)) throw new Error(`owner: ${JSON.stringify(owner41)} is not a 41-prefixed hex address`);
  return `41${keccak256(`0x${txId}${owner41}`).slice(-40)}`.toLowerCase();
}

/** A signed CreateSmartContract transaction in Tron's JSON, and the address its contract lands at. */
export interface SignedTronCreation {
  transaction: {
    visible: false;
    txID: string;
    raw_data: Record<string, unknown>;
    raw_data_hex: string;
    signature: string[];
  };
  /** 41-prefixed hex. */
  contractAddress: string;
}

/**
 * Builds and signs a contract creation offline, as TronWeb's `createSmartContract` builds one: the
 * creation code with its constructor arguments, the ABI, `consume_user_resource_percent` 100 (callers pay
 * the energy of their calls) and an `origin_energy_limit` of 10 M; TAPOS from `reference`, valid until
 * `expiration` (ms). The protobuf bytes come from TronWeb's encoder, as for calls (transactions.ts).
 */
export async function signTronCreation(input: {
  owner41: string;
  abi: Abi;
  /** Creation code followed by the ABI-encoded constructor arguments (hex, 0x). */
  code: Hex;
  name: string;
  privateKey: Hex;
  reference: TronBlockHeader;
  expiration: number;
  feeLimitSun: bigint;
  now?: number;
}): Promise<SignedTronCreation> {
  const raw_data = {
    contract: [
      {
        parameter: {
          value: {
            owner_address: input.owner41,
            new_contract: {
              origin_address: input.owner41,
              abi: { entrys: input.abi },
              bytecode: input.code.slice(2).toLowerCase(),
              consume_user_resource_percent: 100,
              name: input.name,
              origin_energy_limit: 10_000_000,
            },
          },
          type_url: 'type.googleapis.com/protocol.CreateSmartContract',
        },
        type: 'CreateSmartContract',
      },
    ],
    ...transactionHeader(input),
  };
  const { utils } = await import('tronweb');
  const pb: unknown = utils.transaction.txJsonToPb({ raw_data, visible: false });
  const rawDataHex = String(utils.transaction.txPbToRawDataHex(pb)).toLowerCase();
  const txID = bytesToHex(sha256(hexToBytes(`0x${rawDataHex}`))).slice(2);
  const signature = await sign({ hash: `0x${txID}`, privateKey: input.privateKey, to: 'hex' });
  return {
    transaction: { visible: false, txID, raw_data, raw_data_hex: rawDataHex, signature: [signature.slice(2)] },
    contractAddress: tronContractAddress(txID, input.owner41),
  };
}
