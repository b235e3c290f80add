import type { Hex } from 'viem';
import type { Clock } from '../clock.ts';
import type { ChainAccessConfig } from '../config/service-config.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import type { ActionBodies } from '../relayer/action-bodies.ts';
import type { RelayerAction } from '../relayer/actions.ts';
import type { Worker } from '../lease-loop.ts';
import type { SolverChain } from '../solver/solver.ts';
import type { Db } from '../store/database.ts';
import type { OrderRecord } from '../store/orders.ts';
import type { RelayerJob } from '../store/relayer-jobs.ts';
import type { FamilyHtlc, SigningOptions } from './family.ts';
import type { Asset, Chain, Registry } from './registry.ts';
import type { ParentLog } from '../log.ts';
import type { FamilyDeployer } from '../deploy/family-deployer.ts';
import type { FamilyPreflight } from '../preflight/family-preflight.ts';
import type { SwapWallet, SwapWalletInput } from './swap-wallet.ts';

/**
 * Everything that is specific to one chain family, in `src/chains/<family>/adapter.ts`. The generic
 * code (API, orders, the solver's decisions, the queue, affiliates, the service's wiring) reaches a
 * family only through this. A new family is a folder with its adapter and one line in `adapters.ts`.
 */
export interface ChainAdapter {
  /** HTLC ids, addresses and the source's signing data. */
  readonly htlc: FamilyHtlc;
  /**
   * Where HTLC parties are public keys that sign in scripts, not addresses (Bitcoin family): a client
   * without a `delegate` key of its own gets a per-order key the service holds.
   */
  readonly scriptKeys?: ScriptKeys;
  /** The canonical form of a party (an HTLC's initiator or redeemer) on `chain`, or undefined when it is not one. */
  normalizeParty(chain: Chain, value: string): string | undefined;
  /**
   * How the order list finds the party `value` names on `chain` (an address, or on the Bitcoin family
   * a script key), as the chain compares them; undefined when it names none there.
   */
  partyMatchKey(chain: Chain, value: string): PartyMatchKey | undefined;
  /** The form this family stores the transaction hash `value` in (its watcher's), or undefined when it is not one. */
  txHashMatchKey(value: string): string | undefined;
  /** What a party is on this family, for configuration errors ("a valid EVM address (...)"). */
  readonly partyDescription: string;
  /** Seconds from an order's creation to its deadline when its source is on this family. */
  readonly sourceDeadlineSeconds: number;
  /** The client's initiate for `GET /v3/quote/{id}` (DESIGN.md section 2), from the source's signing data. */
  quoteInitiate(chain: Chain, signingData: Record<string, unknown>): Record<string, unknown>;
  /** The initiate holds chain state that expires (a recent blockhash): never cached. */
  readonly initiateExpires?: boolean;
  /** How the Aggregator API (`/v3/registry`, an order's `steps`) shows this family; absent: not offered there. */
  readonly aggregator?: AggregatorFamily;
  /** Whether the service, not the client, pays to put the action on chain (the app then needs its gasless flag). */
  servicePays(action: RelayerAction): boolean;
  /** A client's instant refund is signed over hashes (or one digest) the service serves (GET /v2/orders/{id}/instant-refund-hash). */
  readonly servesInstantRefundHash?: boolean;
  /**
   * The body each order action takes on this family's chains (PATCH /v2/orders/{id}?action=), or why
   * the family never takes it from a client (a Bitcoin source is initiated by a payment): checked
   * before the family sees a body, and shown in the OpenAPI document. Where the family has `connect`.
   */
  readonly actionBodies?: ActionBodies;
  /**
   * The contract schemas (ABIs, by the registry's schema names: `evm:htlc_erc20`, `evm:erc20`, ...) of
   * this family's contracts that GET /v2/schemas serves.
   */
  readonly contractSchemas?: Readonly<Record<string, readonly object[]>>;
  /** The chain state that building transactions needs (Solana: a recent blockhash), read through the chain's RPC. */
  signingAccess?(rpcUrl: string): () => Promise<Partial<SigningOptions>>;
  /** Where affiliate fees can be claimed from a contract on this family's chains (`chains.<key>.fee_claim`): its claims; undefined for a contract that is no address there. */
  readonly feeClaims?: (access: FeeClaimAccess) => FeeClaimSigner | undefined;
  /**
   * Whether `signature` proves `address` (canonical, `normalizeParty`) signed `message`, as the family's
   * wallets sign text: how a registered solver proves its addresses. Absent: the family takes no proofs yet.
   */
  verifyAddressProof?: (address: string, message: string, signature: string) => Promise<boolean>;
  /** The proof `verifyAddressProof` takes, made with a key (`hashlock solver` proving its addresses). */
  signAddressProof?: (privateKey: Hex, message: string) => Promise<string>;
  /** The identity in this family's HTLCs of a private key (address, or x-only key), canonical. */
  partyOfKey?: (chain: Chain, privateKey: Hex) => string;
  /** Where a key's coins are paid when it is not its party (Bitcoin family: the key-path wallet address). */
  walletOfKey?: (chain: Chain, privateKey: Hex) => string;
  /** The family's part of `hashlock swap`, the devnet's client: the test user's wallet on one of its chains. */
  swapWallet?: (input: SwapWalletInput) => SwapWallet;
  /**
   * `hashlock deploy` on this family's chains: the HTLC contracts or programs, through the chain's own
   * API. Loaded when asked, so no other command loads it.
   */
  readonly deployer?: () => Promise<FamilyDeployer>;
  /** `hashlock preflight`'s and /health's checks of this family's chains. Loaded when asked. */
  readonly preflight?: () => Promise<FamilyPreflight>;
  /** Works the chain for the service: absent on families that only create orders so far. */
  connect?: (ctx: ChainContext) => ChainRuntime;
}

/** One thing the user does, in the Aggregator API's `Step` shape (docs/api.md, "The Aggregator API"). */
export interface AggregatorStep {
  /** `approve`, `initiate`, `refund`, ...: several steps may share one. */
  id: string;
  /** `deposit` (send `deposit.amount` to `deposit.address`), `transaction` (sign and send `data`) or `signature` (sign `data`, submit the signature). */
  kind: 'deposit' | 'transaction' | 'signature';
  action: string;
  description?: string;
  deposit?: { chain: string; address: string; amount: string };
  /** The chain's own payload; `chain` is the registry's chain key. */
  data?: { chain: string } & Record<string, unknown>;
}

/** A family as the Aggregator API shows it: its chains' kind and the user's steps there. */
export interface AggregatorFamily {
  /** The registry's `vm_type`: `evm`, `bvm`, `svm`, `tvm`. */
  readonly vmType: string;
  /** The chain's own id in decimal, where it has one (EIP-155 on EVM); absent on Bitcoin. */
  chainId?(chain: Chain): string | undefined;
  /**
   * The steps that fund the source, from its signing data (`FamilyHtlc.sourceSigningData`). With
   * `gasless`, the initiate is a `signature` step where the family relays one (the submit's `signature`
   * is the order's gasless `initiate`).
   */
  fundingSteps(asset: Asset, amount: bigint, signingData: Record<string, unknown>, gasless: boolean): AggregatorStep[];
  /**
   * The user's own refund of its source HTLC `swapId` once its timelock has run out; absent where the
   * service refunds the client itself (a Bitcoin-family key it holds).
   */
  refundSteps?(asset: Asset, swapId: string, amount: bigint): AggregatorStep[];
}

/** What a family's fee claims of one chain need. */
export interface FeeClaimAccess {
  chain: Chain;
  /** The key the claim contract names as its signer; without it claims are read, not signed (an API instance). */
  feeSignerKey?: Hex;
  /** The claim contract's address. */
  contract: string;
  /** To read what was claimed already; without it the stored total counts. */
  rpcUrl?: string;
}

/**
 * An affiliate's earnings in one asset. A claim contract tracks what it paid per affiliate and token,
 * whichever app's orders earned it, so both totals are over all apps: the signed cumulative amount is
 * `totalEarned`.
 */
export interface ClaimableRow {
  affiliate: string;
  asset: string;
  /** Earned through every app's orders, base units. */
  totalEarned: bigint;
  /** Claimed as the store knows it (every app), base units; counts only where the contract cannot be read. */
  totalClaimed: bigint;
}

/** A claim paid by the claim contract: one `Claimed` event. */
export interface ClaimPaid {
  /** The claim transaction. */
  txHash: string;
  /** The event's place in its block, to order the claims of one block. */
  logIndex: number;
  blockNumber: bigint;
  /** Unix seconds of the block. */
  timestamp: number;
  /** Paid by this claim, base units. */
  amount: bigint;
  /** The cumulative amount the claim's signature named. */
  cumulativeAmount: bigint;
}

/** A signed claim of what an affiliate has not claimed yet. */
export interface Claim {
  /** `cumulative - already claimed`, base units. */
  amount: bigint;
  cumulativeAmount: bigint;
  signature: string;
  contract: string;
}

export interface FeeClaimSigner {
  /** The claim contract's address, as claims name it. */
  readonly contract: string;
  /**
   * What the contract has paid `affiliate` in `asset` in all, read from the chain; `stored` (the store's
   * total) without an RPC. Undefined for an address or token the contract cannot pay.
   */
  claimed(affiliate: string, asset: Asset, stored: bigint): Promise<bigint | undefined>;
  /**
   * The fee signer's signature of a claim by `affiliate` of `cumulativeAmount` in all; undefined without
   * the key, or for an address or token the contract cannot pay.
   */
  sign(affiliate: string, asset: Asset, cumulativeAmount: bigint): Promise<string | undefined>;
  /**
   * The claims the contract paid `affiliate` in `asset`, oldest first, read from the chain; none without
   * an RPC (or for an address or token the contract cannot pay). A chain read that fails throws
   * `chain_unavailable`.
   */
  claimsPaid(affiliate: string, asset: Asset): Promise<ClaimPaid[]>;
}

/** The keys a family's scripts name as parties: how a client's delegate key is read, and how the service makes one. */
export interface ScriptKeys {
  /** The canonical form of a client's delegate key, or undefined when `value` is not one. */
  parseDelegate(value: string): string | undefined;
  /** What a delegate key is, for error messages ("an x-only public key (64 hex characters)"). */
  readonly delegateDescription: string;
  /** A new private key the service holds for a client, and the party its scripts name. */
  newKey(): { privateKey: Uint8Array; party: string };
  /** The party a private key is in the scripts. */
  partyOf(privateKey: Uint8Array): string;
}

/**
 * A party as the order list looks it up: the stored forms equal to `key` in any case (hex, bech32),
 * or, when `exact` (base58, where case is part of the value), only `key` itself, the canonical form.
 */
export interface PartyMatchKey {
  key: string;
  exact: boolean;
}

/** What the service hands a family to work one chain. */
export interface ChainContext {
  chain: Chain;
  registry: Registry;
  access: ChainAccessConfig & { rpc_url: string };
  db: Db;
  /** The time the chain's decisions read (rule 2's broadcast deadline, order deadlines, backoff, caches). */
  clock: Clock;
  secrets: SecretBox;
  /** Names this instance in leases and job locks. */
  instance: string;
  log: ParentLog;
  /** The relayer's key: it signs and pays for the gasless actions on this chain. */
  relayerKey?: Hex;
  /**
   * The relayer's address on this chain (the config's `chains.<key>.relayer`) on an instance that holds
   * no key: the chain still takes the clients' actions, whose jobs an instance holding `relayerKey` signs.
   */
  relayerAddress?: string;
  /** The solver's key, when this instance acts for the solver whose party on this chain it is. */
  solverKey?: Hex;
}

/** One chain, worked: its workers, the solver's operations there, the clients' actions, balances. */
export interface ChainRuntime {
  /** Its watcher, transaction senders and broadcaster, each run by exactly one instance at a time under its lease. */
  workers: Worker[];
  /** The solver's operations on the chain (with `solverKey`). */
  solver?: SolverChain;
  /** The PATCH actions of orders whose acted-on side is on this chain. */
  clientActions?: ClientActions;
  /** The on-chain balance of `party` (as the solver config names it) in each asset. */
  balances(party: string, assets: readonly Asset[]): Promise<Array<{ asset: Asset; balance: bigint; blockNumber?: bigint }>>;
  /** Runs once before the workers start (queueing one-time approvals). */
  prepare?(): Promise<void>;
}

/** The order actions of one family (PATCH /v2/orders/{id}), after the generic permission check. */
export interface ClientActions {
  /**
   * Checks the body against the action's schema (`ChainAdapter.actionBodies`, through
   * `performWith`), then the request against the order and the chain, and writes (or finds) the one
   * job of the order and action.
   */
  perform(order: OrderRecord, action: RelayerAction, body: unknown): Promise<RelayerJob>;
  /** The hashes a client signs for an instant refund (GET .../instant-refund-hash), where the family has them. */
  instantRefundHashes?(order: OrderRecord): Promise<string[]>;
  /**
   * The one digest a client signs for an instant refund (GET .../instant-refund-hash answers it as a
   * string, as Garden's docs show), where the family's consent is a signature of it (EVM: Refund(orderId)).
   */
  instantRefundDigest?(order: OrderRecord): Promise<string>;
  /**
   * The client's signatures of those hashes, verified and normalized, as its consent to a later
   * instant refund; nothing is co-signed or sent. Where the family has the hashes.
   */
  checkInstantRefundConsent?(order: OrderRecord, signatures: readonly string[]): Promise<string[]>;
  /**
   * The solver's instant refund of a failed order with the consent the client gave in advance
   * (`checkInstantRefundConsent`): its job, or why the consent no longer applies (the source's
   * outputs changed since it was signed), so it can be dropped. Where the family has the hashes.
   */
  instantRefundWithConsent?(order: OrderRecord, signatures: readonly string[]): Promise<{ job: RelayerJob } | { outdated: string }>;
  /**
   * The client's own signed redeem of its destination (hex), checked and written as the order's one
   * redeem job; where a client can keep the destination key (Bitcoin-family chains).
   */
  relayClientRedeem?(order: OrderRecord, rawTx: string): Promise<RelayerJob>;
}

