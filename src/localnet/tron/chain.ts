import { TronWeb, utils } from 'tronweb';
import { keccak256, numberToHex, type Hex } from 'viem';
import { runtimeCodeHash } from '../../chains/solidity-htlc/artifacts.ts';
import { tronContractAddress } from '../../chains/tron/creation.ts';
import { tronContractArtifact } from './contracts.ts';
import type { AnvilNode } from '../evm/anvil.ts';
import { blockIdOf, refBlockBytesOf, refBlockHashOf, tronBlockJson, type EvmBlock } from './blocks.ts';
import { outcomeOf, transactionInfoJson, type EvmReceipt } from './receipts.ts';
import { smartContractJson, tronAbiEntry } from './smart-contracts.ts';
import { TransactionIndex, type IndexedTransaction } from './transaction-index.ts';
import { checkCreate, checkExpiration, checkHash, checkSignature, checkTapos, TransactionRefused, type TransactionCall, type TronTransaction } from './transaction-rules.ts';

/** TRX has 6 decimals (SUN); the EVM's ether 18: one SUN is 10^12 wei. */
export const WEI_PER_SUN = 10n ** 12n;
/** SUN per unit of energy (mainnet's price in 2025); energy is approximated by EVM gas. */
export const DEFAULT_ENERGY_PRICE_SUN = 100n;
/** java-tron's cap on fee_limit: 15,000 TRX. */
export const MAX_FEE_LIMIT_SUN = 15_000_000_000n;
/** How long a transaction the node builds stays valid past the head block, as java-tron builds them. */
export const BUILT_EXPIRATION_MS = 60_000;
/** anvil's block gas limit: the most energy one transaction gets, whatever its fee_limit. */
const BLOCK_GAS_LIMIT = 30_000_000n;
/** Recent blocks kept in Tron's JSON, by EVM block hash. */
const BLOCK_CACHE_SIZE = 64;

/** A call as `wallet/triggersmartcontract` and `wallet/triggerconstantcontract` take it, addresses as 41-hex. */
export interface ContractCall {
  owner: string;
  contract: string;
  data: string;
  callValue: bigint;
  feeLimit: bigint;
}

/** A creation as `wallet/deploycontract` takes it: the owner as 41-hex, `bytecode` with the constructor's parameter appended. */
export interface CreateRequest {
  owner: string;
  abi: Record<string, unknown>[];
  bytecode: string;
  callValue: bigint;
  consumeUserResourcePercent: number;
  originEnergyLimit: number;
  name: string;
  feeLimit: bigint;
}

export interface TronChainOptions {
  anvil: AnvilNode;
  /** Where the transaction index is kept (beside anvil's state); none keeps it in memory. */
  indexFile?: string;
  energyPriceSun?: bigint;
  /** Blocks behind the head at which a block counts as solidified (the `walletsolidity/` view); Tron's is 19. */
  solidifyDepth?: number;
  /** After each accepted broadcast, mine a block at once (the on-demand mode of the tests). */
  mineEachTransaction?: boolean;
}

const strip = (hex: string) => hex.replace(/^0x/, '').toLowerCase();

/** Which of the local chain's own contracts (placed without a Tron creation) `code` (runtime, hex) is, by its code hash. */
function placedArtifact(code: string): { name: string; abi: Array<Record<string, unknown>> } | undefined {
  for (const name of ['TestToken', 'TronHTLC'] as const) {
    const artifact = tronContractArtifact(name);
    if (runtimeCodeHash(`0x${code}`, artifact) === artifact.codeHash) {
      return { name, abi: artifact.abi as unknown as Array<Record<string, unknown>> };
    }
  }
  return undefined;
}
const evmAddress = (tron41: string): Hex => `0x${tron41.slice(2)}`;

/**
 * Tron's chain over anvil: blocks are anvil's blocks, a transaction is checked by Tron's rules, then run
 * on anvil as its owner (impersonated, once the signature has proven ownership) with a gas limit from
 * its fee_limit, and indexed by txID. Broadcasts and mining go through one queue, so checks, sends and
 * blocks never interleave.
 */
export class TronChain {
  readonly anvil: AnvilNode;
  private readonly index: TransactionIndex;
  readonly energyPriceSun: bigint;
  private readonly solidifyDepth: number;
  private readonly mineEachTransaction: boolean;
  private queue: Promise<unknown> = Promise.resolve();
  /** Set while `mine` adds several blocks: anvil shows each block as it mines it, a jumping chain shows none of them. */
  private headBeforeMining: number | undefined;
  /**
   * Recent blocks in Tron's JSON (transactions and their results), by EVM block hash: a mined block never
   * changes, and a replaced one has another hash. Every `getnowblock` answers the head block with its
   * transactions, and building it asks anvil for each one's receipt.
   */
  private readonly blocks = new Map<string, Promise<Record<string, unknown>>>();

  constructor(options: TronChainOptions) {
    this.anvil = options.anvil;
    this.index = new TransactionIndex(options.indexFile);
    this.energyPriceSun = options.energyPriceSun ?? DEFAULT_ENERGY_PRICE_SUN;
    this.solidifyDepth = options.solidifyDepth ?? 19;
    this.mineEachTransaction = options.mineEachTransaction ?? false;
  }

  /** Runs `task` after everything queued before it. */
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The head readers see: anvil's, except while `mine` adds several blocks, when it is the head before them. */
  async headNumber(): Promise<number> {
    return this.headBeforeMining ?? this.anvilHead();
  }

  private async anvilHead(): Promise<number> {
    return Number(await this.anvil.rpc('eth_blockNumber'));
  }

  /** The newest solidified block's number. */
  async solidNumber(): Promise<number> {
    return Math.max(0, (await this.headNumber()) - this.solidifyDepth);
  }

  async evmBlock(number: number): Promise<EvmBlock | undefined> {
    const block = (await this.anvil.rpc('eth_getBlockByNumber', [numberToHex(number), false])) as { number: Hex; hash: Hex; parentHash: Hex; timestamp: Hex; transactions: Hex[] } | null;
    if (!block) return undefined;
    return { number: Number(block.number), hash: block.hash, parentHash: block.parentHash, timestamp: Number(block.timestamp), transactions: block.transactions };
  }

  async blockId(number: number): Promise<string | undefined> {
    const block = await this.evmBlock(number);
    return block && blockIdOf(block.number, block.hash, this.anvil.chainId);
  }

  /**
   * Block `number` in Tron's JSON with its Tron transactions (`detail`, as `getnowblock` and
   * `getblockbynum` answer), or its header only (`getblock`'s default); undefined past the head (or the
   * solidified block).
   */
  async block(number: number, confirmed = false, detail = true): Promise<Record<string, unknown> | undefined> {
    if (number < 0 || number > (confirmed ? await this.solidNumber() : await this.headNumber())) return undefined;
    const block = await this.evmBlock(number);
    if (!block) return undefined;
    if (!detail) return tronBlockJson(block, [], this.anvil.chainId);
    let json = this.blocks.get(block.hash);
    if (!json) {
      json = Promise.all(block.transactions.flatMap((hash) => this.index.byEvm(hash) ?? []).map((entry) => this.transactionWithResult(entry))).then((transactions) => tronBlockJson(block, transactions, this.anvil.chainId));
      this.blocks.set(block.hash, json);
      json.catch(() => this.blocks.delete(block.hash));
      if (this.blocks.size > BLOCK_CACHE_SIZE) this.blocks.delete(this.blocks.keys().next().value!);
    }
    return json;
  }

  /**
   * Mines `blocks` blocks now, in one step: no reader sees a head between the first and the last, as a
   * chain that moved on while nobody looked would not show one.
   */
  mine(blocks = 1): Promise<void> {
    return this.serial(async () => {
      if (blocks > 1) this.headBeforeMining = await this.anvilHead();
      try {
        await this.mineBlock();
        // Each later block a second after its parent, as mineBlock does for a head ahead of the clock.
        if (blocks > 1) await this.anvil.rpc('anvil_mine', [`0x${(blocks - 1).toString(16)}`, '0x1']);
      } finally {
        this.headBeforeMining = undefined;
      }
      this.index.save();
    });
  }

  /**
   * A block at the wall clock's second, and at least a second after its parent: Tron's block times only go
   * up. (EVM times are whole seconds, so blocks faster than one a second run ahead of the clock.)
   */
  private async mineBlock(): Promise<void> {
    const head = (await this.evmBlock(await this.anvilHead()))!;
    await this.anvil.rpc('evm_mine', [Math.max(Math.floor(Date.now() / 1000), head.timestamp + 1)]);
  }

  /** The transaction java-tron's `wallet/triggersmartcontract` builds: referencing the head block, valid for a minute past it. */
  async buildTrigger(call: ContractCall, visible: boolean): Promise<Record<string, unknown>> {
    if (!(await this.hasCode(call.contract))) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', 'No contract or not a valid smart contract');
    const address = (hex41: string) => (visible ? TronWeb.address.fromHex(hex41) : hex41);
    const value: Record<string, unknown> = { data: call.data, owner_address: address(call.owner), contract_address: address(call.contract) };
    if (call.callValue > 0n) value.call_value = Number(call.callValue);
    return this.built({ parameter: { value, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' }, type: 'TriggerSmartContract' }, call.feeLimit, visible);
  }

  /**
   * The transaction java-tron's `wallet/deploycontract` builds, as a trigger's (nothing is checked before the
   * broadcast), with the `contract_address` its contract will get.
   */
  async buildCreate(request: CreateRequest, visible: boolean): Promise<Record<string, unknown>> {
    const address = (hex41: string) => (visible ? TronWeb.address.fromHex(hex41) : hex41);
    const created: Record<string, unknown> = { origin_address: address(request.owner), abi: { entrys: request.abi.map(tronAbiEntry) } };
    if (request.bytecode !== '') created.bytecode = request.bytecode;
    if (request.callValue > 0n) created.call_value = Number(request.callValue);
    if (request.consumeUserResourcePercent > 0) created.consume_user_resource_percent = request.consumeUserResourcePercent;
    if (request.name !== '') created.name = request.name;
    if (request.originEnergyLimit > 0) created.origin_energy_limit = request.originEnergyLimit;
    const value = { owner_address: address(request.owner), new_contract: created };
    const tx = await this.built({ parameter: { value, type_url: 'type.googleapis.com/protocol.CreateSmartContract' }, type: 'CreateSmartContract' }, request.feeLimit, visible);
    return { ...tx, contract_address: tronContractAddress(String(tx.txID), request.owner) };
  }

  /** An unsigned transaction of one contract, referencing the head block, valid for a minute past it. */
  private async built(contract: Record<string, unknown>, feeLimit: bigint, visible: boolean): Promise<Record<string, unknown>> {
    const head = (await this.evmBlock(await this.headNumber()))!;
    const raw_data = {
      contract: [contract],
      ref_block_bytes: refBlockBytesOf(head.number),
      ref_block_hash: refBlockHashOf(blockIdOf(head.number, head.hash, this.anvil.chainId)),
      expiration: head.timestamp * 1000 + BUILT_EXPIRATION_MS,
      fee_limit: Number(feeLimit),
      timestamp: Date.now(),
    };
    const pb: unknown = utils.transaction.txJsonToPb({ raw_data, visible });
    return { visible, txID: strip(utils.transaction.txPbToTxID(pb)), raw_data, raw_data_hex: utils.transaction.txPbToRawDataHex(pb) };
  }

  private async code(address41: string): Promise<string> {
    return strip((await this.anvil.rpc('eth_getCode', [evmAddress(address41), 'latest'])) as Hex);
  }

  private async hasCode(address41: string): Promise<boolean> {
    return (await this.code(address41)) !== '';
  }

  /**
   * `wallet/getcontract` (and `getcontractinfo`, `info`): the contract at `address` (41-hex) as its creation
   * made it, and its runtime code; {} where no contract is.
   */
  async contract(address: string, visible: boolean, info = false): Promise<Record<string, unknown>> {
    const code = await this.code(address);
    if (code === '') return {};
    const creationHex = this.index.creationOf(address)?.tx.raw_data_hex;
    const placed = creationHex ? undefined : placedArtifact(code);
    const smart = smartContractJson({ address, codeHash: keccak256(`0x${code}`).slice(2), ...(creationHex ? { creationHex } : {}), ...(placed ? { placed } : {}), visible });
    return info ? { runtimecode: code, smart_contract: smart } : smart;
  }

  /** `wallet/triggerconstantcontract`: the call run on the head state, nothing kept. */
  async constantCall(call: Omit<ContractCall, 'feeLimit'>): Promise<Record<string, unknown>> {
    const request = { from: evmAddress(call.owner), to: evmAddress(call.contract), data: `0x${call.data}`, value: numberToHex(call.callValue * WEI_PER_SUN) };
    try {
      const [result, gas] = await Promise.all([this.anvil.rpc('eth_call', [request, 'latest']) as Promise<Hex>, this.anvil.rpc('eth_estimateGas', [request, 'latest']).catch(() => '0x0') as Promise<Hex>]);
      return { result: { result: true }, energy_used: Number(gas), constant_result: [strip(result)] };
    } catch (err) {
      const message = (err as Error).message;
      return { result: { code: 'CONTRACT_EXE_ERROR', message: Buffer.from(message).toString('hex') }, energy_used: 0, constant_result: [''] };
    }
  }

  /** The TRX balance of a 41-hex address, in SUN. */
  async balanceSun(address: string): Promise<bigint> {
    return BigInt((await this.anvil.rpc('eth_getBalance', [evmAddress(address), 'latest'])) as Hex) / WEI_PER_SUN;
  }

  /**
   * `wallet/broadcasttransaction`: Tron's checks in turn (bytes and id, the owner's signature,
   * expiration, the reference block, a duplicate), then the transaction runs on anvil from the owner with
   * energy up to its fee_limit (and the owner's balance) at the energy price. A creation is mined at once.
   */
  broadcast(body: unknown): Promise<{ result: true; txid: string } | { code: string; txid?: string; message: string }> {
    return this.serial(async () => {
      let txid: string | undefined;
      let entry: IndexedTransaction;
      try {
        const { tx, call } = checkHash(body);
        txid = tx.txID.toLowerCase();
        await checkSignature(tx, call.owner);
        const head = (await this.evmBlock(await this.headNumber()))!;
        checkExpiration(call.expiration, head.timestamp * 1000);
        await checkTapos(call, head.number, (n) => this.blockId(n));
        if (this.index.has(txid)) throw new TransactionRefused('DUP_TRANSACTION_ERROR', 'Dup transaction.');
        entry = await this.run(tx, call);
      } catch (err) {
        if (!(err instanceof TransactionRefused)) throw err;
        return { code: err.code, ...(txid ? { txid } : {}), message: Buffer.from(err.message).toString('hex') };
      }
      if (entry.contract) await this.placeCreated(entry);
      else if (this.mineEachTransaction) await this.mineBlock();
      this.index.save();
      return { result: true as const, txid };
    });
  }

  /**
   * Sends the transaction to anvil from its owner (impersonated). A creation runs its creation code as
   * the code of the contract's Tron address, so the constructor sees that address as `address(this)` and
   * writes its storage and immutables there; `placeCreated` then puts the runtime code it returned there.
   */
  private async run(tx: TronTransaction, call: TransactionCall): Promise<IndexedTransaction> {
    if (call.feeLimit <= 0n || call.feeLimit > MAX_FEE_LIMIT_SUN) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', `fee_limit must be from 1 to ${MAX_FEE_LIMIT_SUN} SUN`);
    const balance = await this.balanceSun(call.owner);
    if (balance < call.callValue) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', `balance ${balance} SUN is not enough for call_value ${call.callValue}`);
    let to: string;
    let data = '';
    if (call.type === 'TriggerSmartContract') {
      if (!(await this.hasCode(call.contract))) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', 'No contract or not a valid smart contract');
      to = call.contract;
      data = call.data;
    } else {
      checkCreate(call);
      to = tronContractAddress(tx.txID, call.owner);
      if (await this.hasCode(to)) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', `Trying to create a contract with existing contract address: ${TronWeb.address.fromHex(to)}`);
    }
    // Energy up to fee_limit, and no more than the TRX left after call_value pays for (java-tron caps it the same way).
    const affordable = balance - call.callValue < call.feeLimit ? balance - call.callValue : call.feeLimit;
    let gasLimit = affordable / this.energyPriceSun;
    if (gasLimit > BLOCK_GAS_LIMIT) gasLimit = BLOCK_GAS_LIMIT;
    const intrinsic = 21_000n + BigInt(Buffer.from(data, 'hex').reduce((sum, byte) => sum + (byte === 0 ? 4 : 16), 0));
    if (gasLimit < intrinsic) throw new TransactionRefused('CONTRACT_VALIDATE_ERROR', `fee_limit ${call.feeLimit} SUN (and the balance) do not cover the ${intrinsic} energy a call starts with`);
    const from = evmAddress(call.owner);
    if (call.type === 'CreateSmartContract') await this.anvil.rpc('anvil_setCode', [evmAddress(to), `0x${call.bytecode}`]);
    await this.anvil.rpc('anvil_impersonateAccount', [from]);
    let evmHash: Hex;
    try {
      evmHash = (await this.anvil.rpc('eth_sendTransaction', [
        { from, to: evmAddress(to), data: `0x${data}`, value: numberToHex(call.callValue * WEI_PER_SUN), gas: numberToHex(gasLimit), gasPrice: numberToHex(this.energyPriceSun * WEI_PER_SUN) },
      ])) as Hex;
    } catch (err) {
      if (call.type === 'CreateSmartContract') await this.anvil.rpc('anvil_setCode', [evmAddress(to), '0x']);
      throw err;
    } finally {
      await this.anvil.rpc('anvil_stopImpersonatingAccount', [from]);
    }
    const entry: IndexedTransaction = { tx, evmHash, gasLimit: gasLimit.toString(), ...(call.type === 'CreateSmartContract' ? { contract: to } : {}) };
    this.index.add(entry);
    return entry;
  }

  /**
   * Mines a creation's block now and puts the runtime code its creation code returned (anvil's call
   * trace has it) at the contract's address, or none when it failed: until then the address holds the
   * creation code, which no other transaction may run.
   */
  private async placeCreated(entry: IndexedTransaction): Promise<void> {
    let receipt: EvmReceipt | undefined;
    for (let blocks = 0; !receipt; blocks++) {
      if (blocks === 3) throw new Error(`the creation ${entry.tx.txID} was in none of 3 blocks`);
      await this.mineBlock();
      receipt = await this.receipt(entry);
    }
    let runtime: Hex = '0x';
    if (Number(receipt.status) === 1) {
      const trace = (await this.anvil.rpc('debug_traceTransaction', [entry.evmHash, { tracer: 'callTracer' }])) as { output?: Hex };
      runtime = trace.output ?? '0x';
    }
    await this.anvil.rpc('anvil_setCode', [evmAddress(entry.contract!), runtime]);
  }

  private async receipt(entry: IndexedTransaction): Promise<EvmReceipt | undefined> {
    return ((await this.anvil.rpc('eth_getTransactionReceipt', [entry.evmHash])) as EvmReceipt | null) ?? undefined;
  }

  private async transactionWithResult(entry: IndexedTransaction, receipt?: EvmReceipt): Promise<Record<string, unknown>> {
    const mined = receipt ?? (await this.receipt(entry));
    return { ...entry.tx, ...(mined ? { ret: [{ contractRet: outcomeOf(entry, mined) }] } : {}) };
  }

  /** The entry of `txID` and its receipt, once in a block of the view asked for (any block, or a solidified one). */
  private async mined(txID: string, confirmed: boolean): Promise<{ entry: IndexedTransaction; receipt: EvmReceipt } | undefined> {
    const entry = this.index.get(strip(txID));
    const receipt = entry && (await this.receipt(entry));
    if (!entry || !receipt || (confirmed && Number(receipt.blockNumber) > (await this.solidNumber()))) return undefined;
    return { entry, receipt };
  }

  /** `wallet/gettransactionbyid`: the transaction once in a block, with its result; {} before. */
  async transaction(txID: string, confirmed = false): Promise<Record<string, unknown>> {
    const found = await this.mined(txID, confirmed);
    return found ? this.transactionWithResult(found.entry, found.receipt) : {};
  }

  /** `wallet/gettransactioninfobyid`: the receipt in Tron's shape, logs included; {} before the transaction is in a block (or solidified). */
  async transactionInfo(txID: string, confirmed = false): Promise<Record<string, unknown>> {
    const found = await this.mined(txID, confirmed);
    return found ? this.info(found.entry, found.receipt) : {};
  }

  /** `wallet/gettransactioninfobyblocknum`: every transaction's info of one block, what a watcher reads per block. */
  async transactionInfosOfBlock(number: number, confirmed = false): Promise<Record<string, unknown>[]> {
    if (number > (confirmed ? await this.solidNumber() : await this.headNumber())) return [];
    const block = await this.evmBlock(number);
    if (!block) return [];
    const entries = block.transactions.flatMap((hash) => this.index.byEvm(hash) ?? []);
    return Promise.all(entries.map(async (entry) => this.info(entry, (await this.receipt(entry))!, block)));
  }

  private async info(entry: IndexedTransaction, receipt: EvmReceipt, block?: EvmBlock): Promise<Record<string, unknown>> {
    return transactionInfoJson(entry, receipt, block ?? (await this.evmBlock(Number(receipt.blockNumber)))!, this.energyPriceSun);
  }
}
