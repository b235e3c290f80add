import { safeErrorText } from '../../errors.ts';

/**
 * A small client of Tron's full-node HTTP API (`/wallet/*`, `/walletsolidity/*`), as java-tron and
 * TronGrid serve it: JSON bodies, hex addresses (`41…`, `visible: false`). Only what the service reads
 * and sends: blocks, the transaction infos of a block, a transaction's info, constant calls,
 * broadcasts and balances. Node faults (no connection, a timeout, HTTP 5xx or 429) are
 * `TronNodeUnreachable`: nothing was judged, so they never cost a job an attempt.
 */

/** The node could not be asked: connection refused or lost, no answer in time, HTTP 408/429/5xx. */
export class TronNodeUnreachable extends Error {}

/** The node answered, and refused the request itself (`{"Error": ...}`, a 4xx). */
export class TronApiError extends Error {}

export interface TronApiOptions {
  /** TronGrid's `TRON-PRO-API-KEY` header, when the node needs one. */
  apiKey?: string;
  /** Milliseconds before a request counts as unanswered (default 10 s). */
  timeoutMs?: number;
}

/** A block's header as the watcher and the driver read it. */
export interface TronBlockHeader {
  number: bigint;
  /** 8-byte number then 24 bytes of the hash: 64 hex digits. */
  blockId: string;
  parentId: string;
  timestampMs: number;
}

/** One transaction's info: where it landed, its outcome, its logs. */
export interface TronTransactionInfo {
  id: string;
  blockNumber: bigint;
  blockTimestampMs: number;
  /** 'SUCCESS', 'REVERT', 'OUT_OF_ENERGY', ... */
  result: string;
  failed: boolean;
  /** The TRX (in SUN) its sender burnt for energy and bandwidth: `fee`, absent when nothing was burnt. */
  feeSun: bigint;
  /** Its failure message, decoded from hex, when it failed. */
  message?: string;
  logs: Array<{ address: string; topics: string[]; data: string }>;
}

export interface TronBroadcastAnswer {
  result: boolean;
  code?: string;
  /** Decoded from hex. */
  message?: string;
}

export interface TronConstantAnswer {
  ok: boolean;
  /** The call's return data (hex, no 0x) when ok. */
  output: string;
  energyUsed: number;
  /** Why it reverted, decoded from hex. */
  message?: string;
}

type Json = Record<string, unknown>;

/** A JSON field as text: strings as they are, numbers written out, anything else `fallback`. */
const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : fallback);
/** A JSON whole number (Tron writes some as strings), else 0. */
const whole = (value: unknown): bigint => {
  const t = text(value, '0');
  return /^[0-9]+$/.test(t) ? BigInt(t) : 0n;
};

const fromHex = (hex: unknown): string | undefined => (typeof hex === 'string' && /^([0-9a-fA-F]{2})*$/.test(hex) ? Buffer.from(hex, 'hex').toString('utf8') : typeof hex === 'string' ? hex : undefined);

export class TronApi {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(
    url: string,
    options: TronApiOptions = {},
  ) {
    this.base = url.replace(/\/+$/, '');
    this.headers = { 'content-type': 'application/json', ...(options.apiKey ? { 'TRON-PRO-API-KEY': options.apiKey } : {}) };
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** POSTs `body` to `path` (`wallet/getnowblock`); the JSON answer, or a TronNodeUnreachable / TronApiError. */
  async post<T = unknown>(path: string, body: Json = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.base}/${path}`, { method: 'POST', headers: this.headers, body: JSON.stringify(body), signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new TronNodeUnreachable(`${path}: ${safeErrorText(err)}`, { cause: err });
    }
    const status = response.status;
    let answerText: string;
    try {
      answerText = await response.text();
    } catch (err) {
      throw new TronNodeUnreachable(`${path}: the answer was cut: ${safeErrorText(err)}`, { cause: err });
    }
    if (status === 408 || status === 429 || status >= 500) throw new TronNodeUnreachable(`${path}: HTTP ${status}`);
    let answer: unknown;
    try {
      answer = answerText.trim() === '' ? {} : JSON.parse(answerText);
    } catch {
      // A proxy's HTML error page in front of a node that is down.
      throw new TronNodeUnreachable(`${path}: HTTP ${status}, not JSON`);
    }
    if (status >= 400) throw new TronApiError(`${path}: HTTP ${status}: ${text((answer as Json).Error, answerText).slice(0, 200)}`);
    if (answer !== null && typeof answer === 'object' && !Array.isArray(answer) && typeof (answer as Json).Error === 'string') {
      throw new TronApiError(`${path}: ${String((answer as Json).Error).slice(0, 200)}`);
    }
    return answer as T;
  }

  /**
   * The head block's header (`confirmed`: the newest solidified one). `getblock` without `detail`
   * answers the header alone, where `getnowblock` would send every transaction of the block.
   */
  async nowBlock(confirmed = false): Promise<TronBlockHeader> {
    return headerOf(await this.post<Json>(`${view(confirmed)}/getblock`, { detail: false }), 'getblock');
  }

  /** Block `number`'s header, or undefined when the node has none there (past its head). */
  async blockByNumber(number: bigint, confirmed = false): Promise<TronBlockHeader | undefined> {
    const block = await this.post<Json>(`${view(confirmed)}/getblock`, { id_or_num: number.toString(), detail: false });
    return block.blockID === undefined ? undefined : headerOf(block, `getblock ${number}`);
  }

  /** The info of every transaction of block `number` (their logs included): one request per block, whatever it holds. */
  async transactionInfosOfBlock(number: bigint): Promise<TronTransactionInfo[]> {
    const infos = await this.post<unknown>('wallet/gettransactioninfobyblocknum', { num: Number(number) });
    if (!Array.isArray(infos)) return []; // java-tron answers {} for a block without transactions
    return infos.map((info) => infoOf(info as Json));
  }

  /** A transaction's info once it is in a block (`confirmed`: a solidified one), else undefined. */
  async transactionInfo(txId: string, confirmed = false): Promise<TronTransactionInfo | undefined> {
    const info = await this.post<Json>(`${view(confirmed)}/gettransactioninfobyid`, { value: txId });
    return info.id === undefined ? undefined : infoOf(info);
  }

  /** Runs a call on the head state without a transaction (`owner` and `contract` as 41-hex, `data` hex without 0x). */
  async constantCall(call: { owner: string; contract: string; data: string; callValue?: bigint }): Promise<TronConstantAnswer> {
    const answer = await this.post<Json>('wallet/triggerconstantcontract', {
      owner_address: call.owner,
      contract_address: call.contract,
      data: call.data,
      ...(call.callValue ? { call_value: Number(call.callValue) } : {}),
      visible: false,
    });
    const result = (answer.result ?? {}) as Json;
    const output = Array.isArray(answer.constant_result) ? String(answer.constant_result[0] ?? '') : '';
    const energyUsed = Number(answer.energy_used ?? 0);
    if (result.result === true) return { ok: true, output, energyUsed };
    const message = fromHex(result.message);
    return { ok: false, output, energyUsed, message: `${text(result.code, 'refused')}${message ? `: ${message}` : ''}` };
  }

  /** Broadcasts a signed transaction (Tron's JSON); the node's verdict. */
  async broadcast(tx: Json): Promise<TronBroadcastAnswer> {
    const answer = await this.post<Json>('wallet/broadcasttransaction', tx);
    if (answer.result === true) return { result: true };
    const message = fromHex(answer.message);
    return { result: false, code: text(answer.code, 'OTHER_ERROR'), ...(message !== undefined ? { message } : {}) };
  }

  /** The TRX balance of `address` (41-hex), in SUN; 0 for an account the chain does not know. */
  async balanceSun(address: string): Promise<bigint> {
    const account = await this.post<Json>('wallet/getaccount', { address, visible: false });
    return whole(account.balance);
  }
}

const view = (confirmed: boolean) => (confirmed ? 'walletsolidity' : 'wallet');

function headerOf(block: Json, what: string): TronBlockHeader {
  const raw = ((block.block_header as Json | undefined)?.raw_data ?? {}) as Json;
  const blockId = block.blockID;
  if (typeof blockId !== 'string' || !/^[0-9a-fA-F]{64}$/.test(blockId)) throw new TronApiError(`${what}: the node answered no block`);
  return {
    number: whole(raw.number),
    blockId: blockId.toLowerCase(),
    parentId: text(raw.parentHash).toLowerCase(),
    timestampMs: Number(raw.timestamp ?? 0),
  };
}

function infoOf(info: Json): TronTransactionInfo {
  const receipt = (info.receipt ?? {}) as Json;
  const failed = info.result === 'FAILED';
  const message = failed ? fromHex(info.resMessage) : undefined;
  const logs = Array.isArray(info.log) ? (info.log as Json[]) : [];
  return {
    id: String(info.id).toLowerCase(),
    blockNumber: whole(info.blockNumber),
    blockTimestampMs: Number(info.blockTimeStamp ?? 0),
    // A plain TRX transfer's receipt has no result; only contract calls carry one.
    result: text(receipt.result, failed ? 'FAILED' : 'SUCCESS'),
    failed,
    feeSun: whole(info.fee ?? 0),
    ...(message !== undefined ? { message } : {}),
    logs: logs.map((log) => ({
      address: text(log.address).toLowerCase(),
      topics: Array.isArray(log.topics) ? log.topics.map((t) => String(t).toLowerCase()) : [],
      data: text(log.data).toLowerCase(),
    })),
  };
}
