import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TronWeb } from 'tronweb';
import { keccak256, toBytes } from 'viem';
import { normalizeTronAddress } from '../../chains/tron/address.ts';
import type { ContractCall, CreateRequest, TronChain } from './chain.ts';
import { TransactionRefused } from './transaction-rules.ts';

/** A request's fault, answered as java-tron answers one: `{"Error": "..."}`. */
class BadRequest extends Error {}

type Body = Record<string, unknown>;
type Method = (body: Body, confirmed: boolean) => Promise<unknown>;

const MAX_BODY_BYTES = 1 << 20;
/** java-tron serves at most 100 blocks per getblockbylimitnext. */
const MAX_BLOCK_RANGE = 100;

/** The chain parameters a client reads (`getchainparameters`), each as java-tron names it; `getEnergyFee` the chain's price. */
const chainParameters = (energyFeeSun: number): Array<{ key: string; value?: number }> => [
  { key: 'getMaintenanceTimeInterval', value: 21_600_000 },
  { key: 'getCreateAccountFee', value: 100_000 },
  { key: 'getTransactionFee', value: 1_000 },
  { key: 'getEnergyFee', value: energyFeeSun },
  { key: 'getFreeNetLimit', value: 600 },
  { key: 'getTotalEnergyLimit', value: 180_000_000_000 },
  { key: 'getAllowTvmTransferTrc10', value: 1 },
  { key: 'getAllowTvmConstantinople', value: 1 },
  { key: 'getAllowTvmSolidity059', value: 1 },
  { key: 'getAllowTvmIstanbul', value: 1 },
  { key: 'getAllowTvmLondon', value: 1 },
  { key: 'getMaxFeeLimit', value: 15_000_000_000 },
];

/** The zero address, which TronWeb names as the caller of a constant call when it has no account. */
const ZERO_ADDRESS = `41${'00'.repeat(20)}`;

function address41(body: Body, field: string, fallback?: string): string {
  const value = body[field] ?? fallback;
  const normalized = typeof value === 'string' ? normalizeTronAddress(value) : undefined;
  if (normalized === undefined) throw new BadRequest(`${field}: ${JSON.stringify(value)} is not a Tron address`);
  return TronWeb.address.toHex(normalized).toLowerCase();
}

function whole(body: Body, field: string, fallback?: number): number {
  const value = body[field] ?? fallback;
  const number = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) throw new BadRequest(`${field}: must be a whole number, got ${JSON.stringify(value)}`);
  return number;
}

function hexField(body: Body, field: string): string {
  const value = body[field] ?? '';
  if (typeof value !== 'string' || !/^(0x)?([0-9a-fA-F]{2})*$/.test(value)) throw new BadRequest(`${field}: must be hex bytes`);
  return value.replace(/^0x/, '').toLowerCase();
}

/** The call data of a trigger request: `data`, or the selector of `function_selector` followed by `parameter`. */
function callOf(body: Body, ownerFallback?: string): ContractCall {
  let data: string;
  if (typeof body.function_selector === 'string' && body.function_selector !== '') {
    data = keccak256(toBytes(body.function_selector.replace(/\s/g, ''))).slice(2, 10) + hexField(body, 'parameter');
  } else {
    data = hexField(body, 'data');
  }
  return {
    owner: address41(body, 'owner_address', ownerFallback),
    contract: address41(body, 'contract_address'),
    data,
    callValue: BigInt(whole(body, 'call_value', 0)),
    feeLimit: BigInt(whole(body, 'fee_limit', 0)),
  };
}

/** A creation as `wallet/deploycontract` takes it: `abi` the JSON of the ABI's entries (a string, as java-tron reads it, or the array), `parameter` appended to `bytecode`. */
function createOf(body: Body): CreateRequest {
  let abi: unknown = body.abi ?? [];
  if (typeof abi === 'string') {
    try {
      abi = JSON.parse(abi);
    } catch {
      throw new BadRequest('abi: not JSON');
    }
  }
  if (!Array.isArray(abi) || !abi.every((entry) => typeof entry === 'object' && entry !== null)) throw new BadRequest('abi: must be the array of the ABI\'s entries');
  const name = body.name ?? '';
  if (typeof name !== 'string') throw new BadRequest('name: must be a string');
  return {
    owner: address41(body, 'owner_address'),
    abi: abi as Record<string, unknown>[],
    bytecode: hexField(body, 'bytecode') + hexField(body, 'parameter'),
    callValue: BigInt(whole(body, 'call_value', 0)),
    consumeUserResourcePercent: whole(body, 'consume_user_resource_percent', 0),
    originEnergyLimit: whole(body, 'origin_energy_limit', 0),
    name,
    feeLimit: BigInt(whole(body, 'fee_limit', 0)),
  };
}

const txid = (body: Body): string => {
  const value = body.value;
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) throw new BadRequest('value: must be a transaction id (64 hex digits)');
  return value;
};

/** The methods both views answer (`wallet/` and `walletsolidity/`); `confirmed` is true for the solidified view. */
function viewMethods(chain: TronChain): Record<string, Method> {
  const head = async (confirmed: boolean) => (confirmed ? chain.solidNumber() : chain.headNumber());
  const blockOr = async (number: number, confirmed: boolean, detail = true) => (await chain.block(number, confirmed, detail)) ?? {};
  return {
    getnowblock: async (_body, confirmed) => blockOr(await head(confirmed), confirmed),
    getblockbynum: async (body, confirmed) => blockOr(whole(body, 'num'), confirmed),
    // The header only unless `detail` is true, as java-tron answers it.
    getblock: async (body, confirmed) => {
      const id = body.id_or_num;
      const detail = body.detail === true;
      if (id === undefined || id === '') return blockOr(await head(confirmed), confirmed, detail);
      if (typeof id === 'string' && /^[0-9a-fA-F]{64}$/.test(id)) {
        const number = parseInt(id.slice(0, 16), 16);
        const block = await blockOr(number, confirmed, detail);
        return block.blockID === id.toLowerCase() ? block : {};
      }
      return blockOr(whole(body, 'id_or_num'), confirmed, detail);
    },
    getblockbylimitnext: async (body, confirmed) => {
      const start = whole(body, 'startNum');
      const end = whole(body, 'endNum');
      if (end <= start || end - start > MAX_BLOCK_RANGE) throw new BadRequest(`endNum must be above startNum by 1 to ${MAX_BLOCK_RANGE}`);
      const blocks = [];
      for (let n = start; n < end; n++) {
        const block = await chain.block(n, confirmed);
        if (!block) break;
        blocks.push(block);
      }
      return blocks.length > 0 ? { block: blocks } : {};
    },
    gettransactionbyid: (body, confirmed) => chain.transaction(txid(body), confirmed),
    gettransactioninfobyid: (body, confirmed) => chain.transactionInfo(txid(body), confirmed),
    gettransactioninfobyblocknum: (body, confirmed) => chain.transactionInfosOfBlock(whole(body, 'num'), confirmed),
    getaccount: async (body) => {
      const owner = address41(body, 'address');
      const balance = await chain.balanceSun(owner);
      // Tron knows no account before it is activated; the local chain counts one with TRX as activated.
      if (balance === 0n) return {};
      return { address: body.visible === true ? TronWeb.address.fromHex(owner) : owner, balance: Number(balance) };
    },
    triggerconstantcontract: (body) => chain.constantCall(callOf(body, ZERO_ADDRESS)),
  };
}

/** The full node's own methods (`wallet/` only). */
function walletMethods(chain: TronChain): Record<string, Method> {
  return {
    getblockbyid: async (body) => {
      const id = txid(body);
      const block = await chain.block(parseInt(id.slice(0, 16), 16));
      return block && block.blockID === id.toLowerCase() ? block : {};
    },
    triggersmartcontract: async (body) => {
      const call = callOf(body);
      try {
        return { result: { result: true }, transaction: await chain.buildTrigger(call, body.visible === true) };
      } catch (err) {
        if (!(err instanceof TransactionRefused)) throw err;
        return { result: { code: err.code, message: Buffer.from(err.message).toString('hex') } };
      }
    },
    deploycontract: (body) => chain.buildCreate(createOf(body), body.visible === true),
    getcontract: (body) => chain.contract(address41(body, 'value'), body.visible === true),
    getcontractinfo: (body) => chain.contract(address41(body, 'value'), body.visible === true, true),
    broadcasttransaction: (body) => chain.broadcast(body),
    getchainparameters: async () => ({ chainParameter: chainParameters(Number(chain.energyPriceSun)) }),
    // Energy was always this price here: java-tron's history string, `<since ms>:<sun>` entries.
    getenergyprices: async () => ({ prices: `0:${chain.energyPriceSun}` }),
    getbandwidthprices: async () => ({ prices: '0:1000' }),
    // Nothing is staked on the local chain: only the free daily bandwidth, and the network's totals.
    getaccountresource: async (body) => {
      address41(body, 'address');
      return { freeNetLimit: 600, TotalNetLimit: 43_200_000_000, TotalNetWeight: 84_000_000_000, TotalEnergyLimit: 180_000_000_000, TotalEnergyWeight: 19_000_000_000 };
    },
    getnodeinfo: async () => {
      const [head, solid] = await Promise.all([chain.headNumber(), chain.solidNumber()]);
      const [headId, solidId] = await Promise.all([chain.blockId(head), chain.blockId(solid)]);
      return {
        beginSyncNum: head,
        block: `Num:${head},ID:${headId ?? ''}`,
        solidityBlock: `Num:${solid},ID:${solidId ?? ''}`,
        currentConnectCount: 0,
        activeConnectCount: 0,
        passiveConnectCount: 0,
        totalFlow: 0,
        peerList: [],
        configNodeInfo: { codeVersion: 'hashlock-local', versionNum: '0', p2pVersion: '0', listenPort: 0, discoverEnable: false },
        machineInfo: {},
        cheatWitnessInfoMap: {},
      };
    },
    // The call run on the head state, as triggerconstantcontract runs it: its energy, or the revert.
    estimateenergy: async (body) => {
      const answer = await chain.constantCall(callOf(body, ZERO_ADDRESS));
      const result = answer.result as { result?: boolean; code?: string; message?: string };
      return result.result === true ? { result: { result: true }, energy_required: answer.energy_used } : { result };
    },
  };
}

async function readBody(req: IncomingMessage): Promise<Body> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method === 'GET') return Object.fromEntries(url.searchParams);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest('the request body is over 1 MiB');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('the request body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest('the request body must be a JSON object');
  return body as Body;
}

/** Tron's HTTP API (`/wallet/*`, `/walletsolidity/*`) over `chain`, on 127.0.0.1:`port` (a free one by default). */
export async function serveTronApi(chain: TronChain, port = 0): Promise<{ server: Server; url: string; port: number }> {
  const view = viewMethods(chain);
  const methods = new Map<string, Method>([
    ...Object.entries({ ...view, ...walletMethods(chain) }).map(([name, fn]) => [`/wallet/${name}`, fn] as const),
    ...Object.entries(view).map(([name, fn]) => [`/walletsolidity/${name}`, fn] as const),
  ]);
  const server = createServer((req, res) => {
    const reply = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.toLowerCase();
    const method = methods.get(path);
    if (!method) return reply(404, { Error: `${path}: not a method of the local Tron chain` });
    readBody(req)
      .then((body) => method(body, path.startsWith('/walletsolidity/')))
      .then(
        (result) => reply(200, result),
        (err: Error) => (err instanceof BadRequest ? reply(200, { Error: err.message }) : reply(500, { Error: `the local Tron chain failed: ${err.message}` })),
      );
  });
  // Idle keep-alive connections outlive the clients' own idle timeout (undici's 4 s): a server closing
  // one just as a client reuses it makes that request fail with ECONNRESET, which under load it did.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${bound}`, port: bound };
}
