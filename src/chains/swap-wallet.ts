// The families' part of `hashlock swap`, the client of the running devnet: the test user's wallet on
// one chain, what it holds there, and how it takes its steps of a swap.

/** A failure `hashlock swap` reports in one line (exit code 1). */
export class SwapError extends Error {}

/** An asset as `GET /v2/assets` lists it. */
export interface SwapAsset {
  id: string;
  /** `<family>:<chain number>`, e.g. `evm:31337` or `bitcoin:1`. */
  chain: string;
  decimals: number;
  token: { address: string; schema: string };
}

/** The service's API as the swap client calls it. */
export interface SwapApi {
  /** The result of a call that must succeed; otherwise a SwapError naming `what` and the service's message. */
  result<T>(what: string, method: string, path: string, body?: unknown): Promise<T>;
}

/** An EVM transaction as the API serves it. */
export interface ApiEvmTx {
  to: `0x${string}`;
  data: `0x${string}`;
  value?: string;
  gas_limit?: string;
}

/** The answer of `POST /v2/orders`: what each family's source needs to initiate. */
export interface CreatedOrder {
  order_id: string;
  /** EVM source: the EIP-712 data of a gasless initiate. */
  typed_data?: {
    domain: { name: string; version: string; chainId: string; verifyingContract: `0x${string}` };
    types: { Initiate: Array<{ name: string; type: string }> };
    message: { redeemer: `0x${string}`; timelock: string; amount: string; secretHash: `0x${string}` };
  } | null;
  approval_transaction?: ApiEvmTx | null;
  initiate_transaction?: ApiEvmTx | null;
  /** Bitcoin-family source: the HTLC address to pay and the exact amount. */
  to?: string;
  amount?: string;
  /** Solana source: the unsigned initiate the user signs and broadcasts (paying its fee). */
  versioned_tx?: string;
  /** Solana SPL source of a gasless app: the initiate the user signs and the relayer sends. */
  versioned_tx_gasless?: string | null;
}

/** What the swap client reads of an order. */
export interface OrderView {
  status?: string;
  source_swap?: { initiate_tx_hash?: string; redeem_tx_hash?: string };
  destination_swap?: { redeem_tx_hash?: string };
}

/** What a step of the swap has at hand. */
export interface SwapStep {
  api: SwapApi;
  /** Epoch ms after which waiting gives up. */
  deadline: number;
  pollMs: number;
  print: (line: string) => void;
}

/** What `hashlock swap` knows when it opens the user's wallet on a chain. */
export interface SwapWalletInput {
  chainKey: string;
  /** devnet.json's entry for the chain (its RPC and the family's own fields), if the devnet runs it. */
  chain: ({ rpc_url?: string } & Record<string, unknown>) | undefined;
  /** devnet.json's test user: its key, and its addresses on the families that need them. */
  user: { private_key: string } & Record<string, unknown>;
  asset: SwapAsset;
  /** The command-line flag that named the asset, for error messages. */
  flag: string;
}

/** The test user's wallet on one chain, holding one asset of the swap. */
export interface SwapWallet {
  /** The user's address there, as the order names it. */
  readonly owner: string;
  balance(): Promise<bigint>;
  /** Initiates the order's source from this wallet; returns the note beside the source's balance change. */
  initiate(created: CreatedOrder, step: SwapStep): Promise<string>;
  /**
   * Once the order completed: waits until what the user gets on this side has settled (a redeem to
   * the user, rent given back) and prints it; returns the note beside the side's balance change.
   */
  settle?(order: OrderView, side: 'source' | 'destination', destinationAmount: bigint, step: SwapStep): Promise<string>;
}

/** Whether the asset is its chain's native coin. */
export const isNativeAsset = (asset: SwapAsset): boolean => asset.token.schema.endsWith(':native');

/**
 * The client's gasless initiate (`PATCH ?action=initiate` with `body`): its transaction's hash. The
 * service answers with none when its relayer has not sent it within its wait (a busy chain, a node
 * away); the order is then read until its source shows the initiate, up to the step's deadline.
 */
export async function relayedInitiate(step: SwapStep, orderId: string, body: object): Promise<string> {
  const sent = await step.api.result<string>('the gasless initiate', 'PATCH', `/v2/orders/${orderId}?action=initiate`, body);
  for (let hash = sent; ; await new Promise((r) => setTimeout(r, step.pollMs))) {
    if (hash) return hash;
    if (Date.now() > step.deadline) throw new SwapError(`order ${orderId}: the relayer accepted the initiate but had not sent it by the deadline`);
    hash = (await step.api.result<OrderView>('the order', 'GET', `/v2/orders/${orderId}`)).source_swap?.initiate_tx_hash ?? '';
  }
}
