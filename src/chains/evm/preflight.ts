import { createPublicClient, erc20Abi, getAddress, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { balanceRow, checked, clockRow, inventoryChecks, type CheckRow, type FamilyPreflight } from '../../preflight/family-preflight.ts';
import type { Asset } from '../registry.ts';
import { contractArtifact } from './contracts.ts';
import { evmCodeMismatch } from './deploy.ts';
import { evmChainId } from './index.ts';

/** `hashlock preflight` on an EVM chain, through standard JSON-RPC. */
export const evmPreflight: FamilyPreflight = async (ctx) => {
  const { chain } = ctx;
  const scope = chain.key;
  if (!ctx.access.rpc_url) return [{ scope, check: 'node', status: 'error', detail: `the config names no rpc_url (chains.${scope}.rpc_url)` }];
  const client = createPublicClient({ transport: http(ctx.access.rpc_url, { retryCount: 1, timeout: 15_000 }) });
  const expected = Number(evmChainId(chain));
  const identity = await checked(scope, 'node', async () => {
    const served = await client.getChainId();
    return served === expected
      ? { scope, check: 'chain id', status: 'ok', detail: `evm:${served}` }
      : { scope, check: 'chain id', status: 'error', detail: `the node serves evm:${served}, the registry names evm:${expected}` };
  });
  // Nothing else a node of another chain answers means anything.
  if (identity.some((r) => r.status === 'error')) return identity;

  const rows: CheckRow[] = [...identity];
  rows.push(...(await checked(scope, 'clock', async () => clockRow(chain, Number((await client.getBlock()).timestamp), ctx.now))));

  const codeRow = async (check: string, address: string, contract: string, identity?: { functionName: string; expected: string }): Promise<CheckRow> => {
    const at = getAddress(address);
    const mismatch = await evmCodeMismatch(client, at, await client.getCode({ address: at }), contractArtifact(contract), identity);
    return mismatch ? { scope, check, status: 'error', detail: mismatch } : { scope, check, status: 'ok', detail: `${contract} at ${at}` };
  };

  for (const asset of chain.assets.filter((a) => a.isActive)) {
    const check = `code ${asset.symbol}`;
    const contract = asset.htlc.schema === 'evm:htlc' ? 'NativeHTLC' : 'HTLC';
    if (asset.htlc.address === '') {
      rows.push({ scope, check, status: 'error', detail: `${asset.id} has no HTLC address: run hashlock deploy --chain ${scope}` });
    } else {
      const identityRead = contract === 'HTLC' ? { functionName: 'token', expected: asset.token.address } : undefined;
      rows.push(...(await checked(scope, check, () => codeRow(check, asset.htlc.address, contract, identityRead))));
    }
    if (asset.token.schema === 'evm:erc20') {
      rows.push(
        ...(await checked(scope, `decimals ${asset.symbol}`, async () => {
          const decimals = await client.readContract({ address: getAddress(asset.token.address), abi: erc20Abi, functionName: 'decimals' });
          return decimals === asset.decimals
            ? { scope, check: `decimals ${asset.symbol}`, status: 'ok', detail: String(decimals) }
            : { scope, check: `decimals ${asset.symbol}`, status: 'error', detail: `the token ${asset.token.address} has ${decimals} decimals, the registry says ${asset.decimals}` };
        })),
      );
    }
  }
  const feeClaim = ctx.access.fee_claim ?? chain.feeClaim;
  if (feeClaim) rows.push(...(await checked(scope, 'code FeeClaim', () => codeRow('code FeeClaim', feeClaim, 'FeeClaim'))));

  const relayer = ctx.keys.relayer ? privateKeyToAccount(ctx.keys.relayer).address : ctx.access.relayer;
  if (relayer) {
    rows.push(...(await checked(scope, 'balance relayer', async () => balanceRow(chain, 'balance relayer', await client.getBalance({ address: getAddress(relayer) }), ctx.minimums.relayer, 'wei'))));
  } else if (ctx.minimums.relayer !== undefined) {
    rows.push({ scope, check: 'balance relayer', status: 'error', detail: 'a minimum is set, but no relayer key or chains.<key>.relayer address' });
  }
  const solver: Address | undefined = ctx.keys.solver ? privateKeyToAccount(ctx.keys.solver).address : ctx.solverAddress ? getAddress(ctx.solverAddress) : undefined;
  if (solver) {
    rows.push(...(await checked(scope, 'balance solver', async () => balanceRow(chain, 'balance solver', await client.getBalance({ address: solver }), ctx.minimums.solver, 'wei'))));
    const held = (asset: Asset) =>
      asset.token.schema === 'evm:native'
        ? client.getBalance({ address: solver })
        : client.readContract({ address: getAddress(asset.token.address), abi: erc20Abi, functionName: 'balanceOf', args: [solver] });
    rows.push(...(await Promise.all(inventoryChecks(ctx, held))).flat());
  }
  return rows;
};
