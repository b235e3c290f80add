import type { Clock } from '../clock.ts';
import type { NodeHealth } from '../chains/node-health.ts';
import type { ClaimSigner } from '../affiliates/claims.ts';
import type { ChainSigningOptions } from '../chains/chain-access.ts';
import type { Registry } from '../chains/registry.ts';
import type { PriceSource } from '../pricing/price-source.ts';
import type { Quoter } from '../pricing/quote.ts';
import type { QuoteAuction } from '../pricing/quote-auction.ts';
import type { RoutePolicy } from '../pricing/route-policy.ts';
import type { OrderCreator } from '../orders/create-order.ts';
import type { OrderCache } from '../orders/order-cache.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import type { OrderActions } from '../relayer/order-actions.ts';
import type { Db } from '../store/database.ts';
import type { ApiKeyAuth } from './auth.ts';
import type { InProcessRequests } from './in-process.ts';
import type { EventHub } from '../events/event-hub.ts';
import type { SolverStanding } from '../solver/solver-standing.ts';

/** What the routes need, built once per API instance. */
export interface ApiContext {
  db: Db;
  /** The time order statuses, quotes and caches are decided by. */
  clock: Clock;
  registry: Registry;
  prices: PriceSource;
  auth: ApiKeyAuth;
  /** Marks this process's own requests of its routes (MCP tool calls), which the rate limit leaves out. */
  inProcess: InProcessRequests;
  orders: OrderCache;
  /** Order event streams (Server-Sent Events). */
  events: EventHub;
  quoter: Quoter;
  /** Quote requests to the registered solvers connected here, and their answers. */
  auction: QuoteAuction;
  /** The solvers suspended from quoting, and the solvers' records. */
  standing: SolverStanding;
  routePolicy: RoutePolicy;
  orderCreator: OrderCreator;
  /** Encrypts what the service keeps secret at rest (webhook signing secrets). */
  secrets: SecretBox;
  /** Whether webhook endpoints may be on loopback, private or link-local addresses. */
  webhooksAllowPrivateAddresses: boolean;
  /** Chain access for building transactions (Solana blockhashes, relayers). */
  signingOptions?: ChainSigningOptions;
  /** Relayed HTLC actions (PATCH .../orders/{id}); absent when no relayer is configured. */
  orderActions?: OrderActions;
  /** Affiliate fee claims: signed with the fee signer's key, else the ones the workers stored; absent: none. */
  claims?: ClaimSigner;
  version: string;
  /** Which chains' nodes this instance cannot reach. */
  nodeHealth?: NodeHealth;
}
