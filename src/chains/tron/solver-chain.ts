import type { Db } from '../../store/database.ts';
import type { Chain, Registry } from '../registry.ts';
import { HtlcSolverChain, type HtlcSolverAccess } from '../solidity-htlc/solver-chain.ts';
import { describeTronError } from './chain-errors.ts';
import type { TronHtlcReader } from './htlc-reads.ts';
import type { TronJobPayload } from './jobs.ts';
import { tronOrderId } from './order-id.ts';

/** The solver on one Tron chain: `HtlcSolverChain` with base58 addresses. */
export type TronSolverChain = HtlcSolverChain<string, TronJobPayload>;

/** An approval this large is left alone: the solver's unlimited approval, worn down only by swaps. */
const UNLIMITED = 2n ** 255n;

/**
 * The solver on one Tron chain (`HtlcSolverChain`, the same decisions on every Solidity HTLC chain):
 * reads HTLC orders with constant calls at the head, and writes jobs that the chain's solver sender
 * signs and broadcasts. What is Tron's own: canonical base58 addresses (compared as strings, 20-byte
 * only in the order id), every HTLC a TRC-20 one.
 */
export function tronSolverChain(chain: Chain, registry: Registry, address: string, reader: TronHtlcReader, db: Db): TronSolverChain {
  if (chain.family !== 'tron') throw new Error(`${chain.key} is not a Tron chain`);
  return new HtlcSolverChain(chain, registry, address, tronSolverAccess(chain, reader), db, describeTronError);
}

function tronSolverAccess(chain: Chain, reader: TronHtlcReader): HtlcSolverAccess<string, TronJobPayload> {
  return {
    party: (address) => address,
    same: (a, b) => a === b,
    orderId: (terms) => tronOrderId({ ...terms, chainId: chain.id }),
    order: (htlc, orderId) => reader.order(htlc, orderId),
    head: async () => (await reader.api.nowBlock()).number,
    // Reads are at the head: no pending state to consult.
    foreignPending: () => Promise.resolve(false),
    token: (htlc) => reader.token(htlc),
    allowance: (token, owner, spender) => reader.allowance(token, owner, spender),
    unlimited: UNLIMITED,
    locksToken: () => true,
    fundJob: (fund) => fund,
    approvalPending: (htlc) => `waiting for the solver's approval of ${htlc} to land`,
  };
}
