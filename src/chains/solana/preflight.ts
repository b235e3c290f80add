import { createHash } from 'node:crypto';
import { address, type Address } from '@solana/kit';
import { getMintDecoder, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { balanceRow, checked, clockRow, type CheckRow, type FamilyPreflight, inventoryChecks } from '../../preflight/family-preflight.ts';
import { solanaBalance } from './balances.ts';
import { solanaAddressOfKey } from './keys.ts';
import { describeNetwork, networkOfGenesis } from './networks.ts';
import { solanaProgram, type SolanaProgramName } from './program-artifacts.ts';
import { holdsElf, readProgram, type ProgramOnChain } from './program-deploy.ts';
import { programKind, type HtlcProgramKind } from './program.ts';
import { solanaRpc } from './rpc.ts';

const PROGRAM_OF_KIND: Readonly<Record<HtlcProgramKind, SolanaProgramName>> = { native: 'native_swaps', spl: 'spl_swaps' };
/** A preflight read waits less than the service's (30 s): /health runs these every minute. */
const READ_TIMEOUT_MS = 15_000;

/**
 * `hashlock preflight` on a Solana chain, through standard JSON-RPC: the node serves the registry's
 * network (its genesis hash), each asset's program holds the shipped ELF, each SPL mint has the
 * registry's decimals, the relayer's and the solver's SOL and the solver's inventory reach their
 * minimums, and the latest block's time agrees with the local clock.
 */
export const solanaPreflight: FamilyPreflight = async (ctx) => {
  const { chain } = ctx;
  const scope = chain.key;
  if (!ctx.access.rpc_url) return [{ scope, check: 'node', status: 'error', detail: `the config names no rpc_url (chains.${scope}.rpc_url)` }];
  const rpc = solanaRpc(ctx.access.rpc_url, READ_TIMEOUT_MS);
  const identity = await checked(scope, 'node', async () => {
    const genesis = await rpc.getGenesisHash().send();
    const served = networkOfGenesis(genesis);
    return served === chain.network
      ? { scope, check: 'chain id', status: 'ok', detail: describeNetwork(served, genesis) }
      : { scope, check: 'chain id', status: 'error', detail: `the node serves ${describeNetwork(served, genesis)}, the registry names ${describeNetwork(chain.network)}` };
  });
  // Nothing else a node of another network answers means anything.
  if (identity.some((r) => r.status === 'error')) return identity;

  const loader = { rpc, commitment: 'confirmed' as const };
  const programs = new Map<string, Promise<ProgramOnChain>>();
  const programAt = (id: string): Promise<ProgramOnChain> => {
    if (!programs.has(id)) programs.set(id, readProgram(loader, address(id)));
    return programs.get(id)!;
  };
  const balances = new Map<string, Promise<bigint>>();
  const balanceOf = (owner: Address, mint?: string): Promise<bigint> => {
    const key = `${owner}:${mint ?? ''}`;
    if (!balances.has(key)) balances.set(key, solanaBalance(rpc, owner, mint).then((b) => b.balance));
    return balances.get(key)!;
  };

  const codeRow = async (asset: (typeof chain.assets)[number]): Promise<CheckRow> => {
    const check = `code ${asset.symbol}`;
    if (asset.htlc.address === '') return { scope, check, status: 'error', detail: `${asset.id} has no HTLC program id: run hashlock deploy --chain ${scope}` };
    const name = PROGRAM_OF_KIND[programKind(asset.htlc.schema)];
    const id = asset.htlc.address;
    const onChain = await programAt(id);
    if (onChain.kind === 'absent') return { scope, check, status: 'error', detail: `no program at ${id}: run hashlock deploy --chain ${scope}` };
    if (onChain.kind === 'other') return { scope, check, status: 'error', detail: `${id} holds ${onChain.description}, not the ${name} program` };
    const elf = solanaProgram(name);
    if (!holdsElf(onChain.code, elf)) {
      const sha256 = createHash('sha256').update(elf).digest('hex');
      return { scope, check, status: 'error', detail: `the program at ${id} is not the shipped ${name} (contracts/artifacts/solana/${name}.so, sha256 ${sha256})` };
    }
    return { scope, check, status: 'ok', detail: `${name} at ${id} (upgrade authority ${onChain.authority ?? 'none: immutable'})` };
  };

  const decimalsRow = async (asset: (typeof chain.assets)[number]): Promise<CheckRow> => {
    const check = `decimals ${asset.symbol}`;
    const mint = address(asset.token.address);
    const { value } = await rpc.getAccountInfo(mint, { commitment: 'confirmed', encoding: 'base64' }).send();
    if (!value) return { scope, check, status: 'error', detail: `no account at the mint ${mint}` };
    const data = Buffer.from(value.data[0], 'base64');
    if (value.owner !== TOKEN_PROGRAM_ADDRESS || data.length !== getMintSize()) {
      return { scope, check, status: 'error', detail: `${mint} is not an SPL Token mint (an account of ${value.owner}, ${data.length} bytes)` };
    }
    const { decimals, isInitialized } = getMintDecoder().decode(data);
    if (!isInitialized) return { scope, check, status: 'error', detail: `the mint ${mint} is not initialized` };
    return decimals === asset.decimals
      ? { scope, check, status: 'ok', detail: String(decimals) }
      : { scope, check, status: 'error', detail: `the mint ${mint} has ${decimals} decimals, the registry says ${asset.decimals}` };
  };

  const assets = chain.assets.filter((a) => a.isActive);
  const reads: Promise<CheckRow[]>[] = [
    checked(scope, 'clock', async () => {
      const slot = await rpc.getSlot({ commitment: 'confirmed' }).send();
      const time = await rpc.getBlockTime(slot).send();
      if (time === null) return { scope, check: 'clock', status: 'error', detail: `the node has no time for its latest confirmed slot ${slot}` };
      return clockRow(chain, Number(time), ctx.now);
    }),
  ];
  for (const asset of assets) {
    reads.push(checked(scope, `code ${asset.symbol}`, () => codeRow(asset)));
    if (asset.token.schema === 'solana:spltoken') reads.push(checked(scope, `decimals ${asset.symbol}`, () => decimalsRow(asset)));
  }

  const relayerKey = ctx.keys.relayer;
  const relayer = relayerKey ? () => solanaAddressOfKey(relayerKey) : ctx.access.relayer ? () => address(ctx.access.relayer!) : undefined;
  if (relayer) {
    reads.push(checked(scope, 'balance relayer', async () => balanceRow(chain, 'balance relayer', await balanceOf(relayer()), ctx.minimums.relayer, 'lamports')));
  } else if (ctx.minimums.relayer !== undefined) {
    reads.push(Promise.resolve([{ scope, check: 'balance relayer', status: 'error', detail: `a minimum is set, but no relayer key or chains.${scope}.relayer address` }]));
  }

  const solverKey = ctx.keys.solver;
  const solver = solverKey ? () => solanaAddressOfKey(solverKey) : ctx.solverAddress ? () => address(ctx.solverAddress!) : undefined;
  if (solver) {
    reads.push(checked(scope, 'balance solver', async () => balanceRow(chain, 'balance solver', await balanceOf(solver()), ctx.minimums.solver, 'lamports')));
    reads.push(...inventoryChecks(ctx, (asset) => balanceOf(solver(), asset.token.schema === 'solana:native' ? undefined : asset.token.address)));
  } else if (ctx.minimums.solver !== undefined || ctx.minimums.inventory.size > 0) {
    reads.push(Promise.resolve([{ scope, check: 'balance solver', status: 'error', detail: `a minimum is set, but no solver key or solvers[].addresses.${scope}` }]));
  }

  return [...identity, ...(await Promise.all(reads)).flat()];
};
