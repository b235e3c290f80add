// Contracts in Tron's JSON: an ABI entry as java-tron prints it, and the SmartContract `wallet/getcontract`
// answers, from the CreateSmartContract transaction that created the contract.
import { TronWeb, utils } from 'tronweb';

type Json = Record<string, unknown>;

/** A protobuf enum's name as java-tron prints it: `function` is `Function`, `nonpayable` `Nonpayable`. */
const enumName = (value: string): string => value.charAt(0).toUpperCase() + value.slice(1).toLowerCase();

/** An ABI entry (Solidity's JSON or Tron's) as java-tron prints it: enum names capitalized, fields at their defaults left out. */
export function tronAbiEntry(entry: Json): Json {
  const param = (p: Json): Json => ({ ...(p.indexed === true ? { indexed: true } : {}), ...(p.name ? { name: p.name } : {}), type: p.type });
  const params = (list: unknown) => (Array.isArray(list) && list.length > 0 ? (list as Json[]).map(param) : undefined);
  const inputs = params(entry.inputs);
  const outputs = params(entry.outputs);
  return {
    ...(entry.anonymous === true ? { anonymous: true } : {}),
    ...(entry.constant === true ? { constant: true } : {}),
    ...(entry.name ? { name: entry.name } : {}),
    ...(inputs ? { inputs } : {}),
    ...(outputs ? { outputs } : {}),
    ...(typeof entry.type === 'string' && entry.type !== '' ? { type: enumName(entry.type) } : {}),
    ...(entry.payable === true ? { payable: true } : {}),
    ...(typeof entry.stateMutability === 'string' && entry.stateMutability !== '' ? { stateMutability: enumName(entry.stateMutability) } : {}),
  };
}

/**
 * `wallet/getcontract`'s SmartContract at `address` (41-hex): what its creation transaction (`creationHex`,
 * the raw_data_hex of a CreateSmartContract) named, the creation code included, and the keccak256 of its
 * runtime code. A contract the local chain's own code placed, with no such transaction, has its address and
 * code hash alone.
 */
export function smartContractJson(input: { address: string; codeHash: string; creationHex?: string; placed?: { name: string; abi: readonly Json[] }; visible: boolean }): Json {
  const address = (hex41: string) => (input.visible ? TronWeb.address.fromHex(hex41) : hex41.toLowerCase());
  if (!input.creationHex) {
    // A contract the local chain placed (the devnet's USDT and HTLC): the ABI of the artifact it placed, as
    // its creation would have named it, so that clients that read the ABI from the node (TronWeb's
    // `contract().at`) can call it.
    const placed = input.placed ? { abi: { entrys: input.placed.abi.map(tronAbiEntry) }, name: input.placed.name } : {};
    return { contract_address: address(input.address), ...placed, code_hash: input.codeHash };
  }
  const raw = utils.deserializeTx.deserializeTransaction('CreateSmartContract', input.creationHex) as {
    contract: [{ parameter: { value: { new_contract: { origin_address: string; abi: { entrys: Json[] }; bytecode: string; call_value: number; consume_user_resource_percent: number; name: string; origin_energy_limit: number } } } }];
  };
  const created = raw.contract[0].parameter.value.new_contract;
  return {
    origin_address: address(created.origin_address),
    contract_address: address(input.address),
    abi: { entrys: created.abi.entrys.map(tronAbiEntry) },
    bytecode: created.bytecode.toLowerCase(),
    ...(created.call_value > 0 ? { call_value: created.call_value } : {}),
    ...(created.consume_user_resource_percent > 0 ? { consume_user_resource_percent: created.consume_user_resource_percent } : {}),
    ...(created.name ? { name: created.name } : {}),
    ...(created.origin_energy_limit > 0 ? { origin_energy_limit: created.origin_energy_limit } : {}),
    code_hash: input.codeHash,
  };
}
