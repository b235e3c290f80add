import { decodeFunctionResult, encodeFunctionData, erc20Abi } from 'viem';
import { balanceRow, checked, clockRow, type CheckRow, type FamilyPreflight, inventoryChecks } from '../../preflight/family-preflight.ts';
import { TronApi, TronApiError } from './api.ts';
import { servedTronChainId, tronHtlcMismatch } from './deploy.ts';
import type { Asset } from '../registry.ts';
import { TronHtlcReader } from './htlc-reads.ts';
import { tronAddressOfKey } from './runtime.ts';
import { hex41 } from './transactions.ts';

/** Constant calls are made from the zero address, as the HTLC reader makes them. */
const ZERO_OWNER = `41${'00'.repeat(20)}`;

/** A TRC-20's `decimals()` through a constant call. */
async function trc20Decimals(api: TronApi, token: string): Promise<number> {
  const answer = await api.constantCall({ owner: ZERO_OWNER, contract: hex41(token), data: encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' }).slice(2) });
  if (!answer.ok) throw new TronApiError(`decimals() of ${token} failed: ${answer.message ?? 'reverted'}`);
  return decodeFunctionResult({ abi: erc20Abi, functionName: 'decimals', data: `0x${answer.output}` });
}

/** `hashlock preflight` on a Tron chain, through Tron's HTTP API alone (a full node, or TronGrid with `api_key`). */
export const tronPreflight: FamilyPreflight = async (ctx) => {
  const { chain } = ctx;
  const scope = chain.key;
  if (!ctx.access.rpc_url) return [{ scope, check: 'node', status: 'error', detail: `the config names no rpc_url (chains.${scope}.rpc_url)` }];
  const api = new TronApi(ctx.access.rpc_url, ctx.access.api_key ? { apiKey: ctx.access.api_key } : {});
  const identity = await checked(scope, 'node', async () => {
    const served = await servedTronChainId(api);
    return served === chain.id
      ? { scope, check: 'chain id', status: 'ok', detail: served }
      : { scope, check: 'chain id', status: 'error', detail: `the node serves ${served}, the registry names ${chain.id}` };
  });
  // Nothing else a node of another chain answers means anything.
  if (identity.some((r) => r.status === 'error')) return identity;

  const rows: CheckRow[] = [...identity];
  rows.push(...(await checked(scope, 'clock', async () => clockRow(chain, (await api.nowBlock()).timestampMs / 1000, ctx.now))));

  for (const asset of chain.assets.filter((a) => a.isActive)) {
    const check = `code ${asset.symbol}`;
    if (asset.htlc.address === '') {
      rows.push({ scope, check, status: 'error', detail: `${asset.id} has no HTLC address: run hashlock deploy --chain ${scope}` });
    } else {
      rows.push(
        ...(await checked(scope, check, async () => {
          const mismatch = await tronHtlcMismatch(api, asset.htlc.address, asset.token.address);
          return mismatch ? { scope, check, status: 'error', detail: mismatch } : { scope, check, status: 'ok', detail: `TronHTLC at ${asset.htlc.address}` };
        })),
      );
    }
    if (asset.token.schema === 'tron:trc20') {
      const decimalsCheck = `decimals ${asset.symbol}`;
      rows.push(
        ...(await checked(scope, decimalsCheck, async () => {
          const decimals = await trc20Decimals(api, asset.token.address);
          return decimals === asset.decimals
            ? { scope, check: decimalsCheck, status: 'ok', detail: String(decimals) }
            : { scope, check: decimalsCheck, status: 'error', detail: `the token ${asset.token.address} has ${decimals} decimals, the registry says ${asset.decimals}` };
        })),
      );
    }
  }

  const relayer = ctx.keys.relayer ? tronAddressOfKey(ctx.keys.relayer) : ctx.access.relayer;
  if (relayer) {
    rows.push(...(await checked(scope, 'balance relayer', async () => balanceRow(chain, 'balance relayer', await api.balanceSun(hex41(relayer)), ctx.minimums.relayer, 'SUN'))));
  } else if (ctx.minimums.relayer !== undefined) {
    rows.push({ scope, check: 'balance relayer', status: 'error', detail: 'a minimum is set, but no relayer key or chains.<key>.relayer address' });
  }
  const solver = ctx.keys.solver ? tronAddressOfKey(ctx.keys.solver) : ctx.solverAddress;
  if (solver) {
    rows.push(...(await checked(scope, 'balance solver', async () => balanceRow(chain, 'balance solver', await api.balanceSun(hex41(solver)), ctx.minimums.solver, 'SUN'))));
    const reader = new TronHtlcReader(api);
    const held = (asset: Asset) => (asset.token.schema === 'tron:trc20' ? reader.trc20Balance(asset.token.address, solver) : api.balanceSun(hex41(solver)));
    rows.push(...(await Promise.all(inventoryChecks(ctx, held))).flat());
  }
  return rows;
};
