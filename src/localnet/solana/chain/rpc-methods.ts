import { accountMethods } from './account-methods.ts';
import { clusterMethods } from './cluster-methods.ts';
import type { RpcMethod, RpcMethodContext } from './rpc-method.ts';
import { transactionMethods } from './transaction-methods.ts';

export type { RpcMethod, RpcMethodContext } from './rpc-method.ts';

/** The JSON-RPC methods, by name. Each reads its params and answers as the real RPC does, or throws RpcError. */
export function createRpcMethods(ctx: RpcMethodContext): Record<string, RpcMethod> {
  return { ...clusterMethods(ctx), ...accountMethods(ctx), ...transactionMethods(ctx) };
}
