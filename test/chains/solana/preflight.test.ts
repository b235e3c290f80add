/**
 * `hashlock preflight` on a Solana chain, against a local chain through its JSON-RPC only: both
 * programs deployed by `hashlock deploy`'s deployer, two test mints, a relayer and a solver.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createKeyPairSignerFromPrivateKeyBytes, generateKeyPairSigner, lamports, type Address, type Instruction, type KeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstructionAsync, getInitializeMint2Instruction, getMintSize, getMintToInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { Hex } from 'viem';
import { chainAdapter } from '../../../src/chains/adapters.ts';
import type { RegistryFile } from '../../../src/chains/registry-schema.ts';
import { Registry, type Chain } from '../../../src/chains/registry.ts';
import { solanaAddressOfKey } from '../../../src/chains/solana/keys.ts';
import { solanaPreflight } from '../../../src/chains/solana/preflight.ts';
import type { CheckRow, PreflightContext } from '../../../src/preflight/family-preflight.ts';
import { sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness } from '../../helpers/solana-localnet.ts';
import { testRegistryFile } from '../../helpers/test-registry.ts';

const SOL = 1_000_000_000n;
type ChainEntry = RegistryFile['chains'][number];

/** A JSON-RPC proxy in front of the chain that records each call's method and first parameter. */
async function recordingProxy(nodeUrl: string): Promise<{ url: string; calls: Array<[string, unknown]>; close(): Promise<void> }> {
  const calls: Array<[string, unknown]> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      for (const call of [JSON.parse(body) as { method: string; params?: unknown[] }].flat()) calls.push([call.method, call.params?.[0]]);
      void fetch(nodeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('hashlock preflight on a Solana chain (local chain, JSON-RPC only)', () => {
  let net: LocalnetHarness;
  let payer: KeyPairSigner;
  let programs: Record<'native_swaps' | 'spl_swaps', string>;
  const mints: Record<string, Address> = {};
  const solverKey: Hex = `0x${randomBytes(32).toString('hex')}`;
  let relayer: Address;

  /** The registry's solana_localnet naming the deployed programs and the test mints, `edit`ed. */
  const solanaChain = (edit: (chain: ChainEntry) => void = () => {}): Chain => {
    const file = testRegistryFile();
    const chain = file.chains.find((c) => c.chain === 'solana_localnet')!;
    for (const asset of chain.assets) {
      asset.htlc.address = asset.htlc.schema === 'solana:htlc' ? programs.native_swaps : programs.spl_swaps;
      if (asset.token.schema === 'solana:spltoken') asset.token.address = mints[asset.symbol]!;
    }
    edit(chain);
    file.chains = [chain];
    return new Registry(file, 'test', { undeployed: true }).chain('solana_localnet')!;
  };
  const asset = (chain: ChainEntry, symbol: string) => chain.assets.find((a) => a.symbol === symbol)!;

  const context = (overrides: Partial<PreflightContext> = {}): PreflightContext => ({
    chain: solanaChain(),
    access: { rpc_url: net.chain.rpcUrl, relayer },
    keys: { solver: solverKey },
    minimums: { relayer: SOL, solver: SOL, inventory: new Map([['solana_localnet:sol', SOL], ['solana_localnet:usdc', 500_000_000n]]) },
    now: Date.now(),
    ...overrides,
  });
  const row = (rows: CheckRow[], check: string): CheckRow => rows.find((r) => r.check === check) ?? assert.fail(`no ${check} row in ${JSON.stringify(rows)}`);

  const send = async (instructions: Instruction[]): Promise<void> => {
    await sendWire(net.rpc, (await signedTransaction(net.rpc, payer, instructions)).wire);
  };

  before(async () => {
    // The local chain runs airdrops and transactions when they are sent; its account reads show them at every commitment.
    net = await startTestLocalnet({ slotMs: 20 });
    payer = await generateKeyPairSigner();
    await net.rpc.requestAirdrop(payer.address, lamports(10n * SOL)).send();
    const deployerKey = Uint8Array.from(randomBytes(32));
    await net.rpc.requestAirdrop((await createKeyPairSignerFromPrivateKeyBytes(deployerKey)).address, lamports(10n * SOL)).send();
    const undeployed = testRegistryFile();
    for (const a of undeployed.chains.find((c) => c.chain === 'solana_localnet')!.assets) a.htlc.address = '';
    const chain = new Registry(undeployed, 'test', { undeployed: true }).chain('solana_localnet')!;
    const deploy = await chainAdapter(chain)!.deployer!();
    const deployment = await deploy({ chain, access: { rpc_url: net.chain.rpcUrl }, deployerKey, assets: chain.assets, wholeChain: true, previous: undefined, options: {}, log: () => {} });
    programs = Object.fromEntries(deployment.contracts.map((c) => [c.contract, c.address])) as typeof programs;

    const solver = solanaAddressOfKey(solverKey);
    relayer = (await generateKeyPairSigner()).address;
    await net.rpc.requestAirdrop(solver, lamports(2n * SOL)).send();
    await net.rpc.requestAirdrop(relayer, lamports(SOL)).send();
    for (const [symbol, decimals] of [['usdc', 6], ['cbbtc', 8]] as const) {
      const mint = await generateKeyPairSigner();
      const space = BigInt(getMintSize());
      const rent = await net.rpc.getMinimumBalanceForRentExemption(space).send();
      await send([
        getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress: TOKEN_PROGRAM_ADDRESS }),
        getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: payer.address }),
      ]);
      mints[symbol] = mint.address;
    }
    const [account] = await findAssociatedTokenPda({ owner: solver, mint: mints.usdc!, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    await send([
      await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, owner: solver, mint: mints.usdc! }),
      getMintToInstruction({ mint: mints.usdc!, token: account, mintAuthority: payer, amount: 1_000_000_000n }),
    ]);
  });

  after(async () => {
    await net?.stop();
  });

  test('green after deploy, reading each program once', async () => {
    const proxy = await recordingProxy(net.chain.rpcUrl);
    const rows = await solanaPreflight(context({ access: { rpc_url: proxy.url, relayer } })).finally(() => proxy.close());
    assert.deepEqual(rows.filter((r) => r.status !== 'ok'), []);
    assert.deepEqual(rows.map((r) => r.check), [
      'chain id',
      'clock',
      'code sol',
      'code usdc',
      'decimals usdc',
      'code cbbtc',
      'decimals cbbtc',
      'balance relayer',
      'balance solver',
      'inventory sol',
      'inventory usdc',
    ]);
    assert.match(row(rows, 'chain id').detail, /^solana localnet \(genesis \w+\)$/);
    assert.match(row(rows, 'code usdc').detail, new RegExp(`^spl_swaps at ${programs.spl_swaps} \\(upgrade authority \\w+\\)$`));
    assert.equal(row(rows, 'balance relayer').detail, `${SOL} lamports (minimum ${SOL})`);
    assert.equal(row(rows, 'inventory usdc').detail, '1000000000 usdc (minimum 500000000)');
    const accountReads = proxy.calls.filter(([method]) => method === 'getAccountInfo').map(([, at]) => at);
    assert.equal(accountReads.filter((at) => at === programs.spl_swaps).length, 1, 'usdc and cbbtc share one read of their program');
    assert.equal(accountReads.filter((at) => at === programs.native_swaps).length, 1);
    assert.ok(proxy.calls.length <= 12, `${proxy.calls.length} calls: ${proxy.calls.map(([m]) => m).join(', ')}`);
  });

  test('a registry naming devnet: the chain id row only', async () => {
    const rows = await solanaPreflight(context({ chain: solanaChain((c) => (c.network = 'devnet')) }));
    assert.deepEqual(rows.map((r) => [r.check, r.status]), [['chain id', 'error']]);
    assert.match(rows[0]!.detail, /^the node serves solana localnet \(genesis \w+\), the registry names solana devnet \(genesis EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG\)$/);
  });

  test('program ids holding other code, another account, nothing, or none named', async () => {
    const nowhere = (await generateKeyPairSigner()).address;
    const rows = await solanaPreflight(
      context({
        chain: solanaChain((c) => {
          asset(c, 'sol').htlc.address = nowhere;
          asset(c, 'usdc').htlc.address = programs.native_swaps;
          asset(c, 'cbbtc').htlc.address = '';
        }),
      }),
    );
    assert.equal(row(rows, 'code sol').detail, `no program at ${nowhere}: run hashlock deploy --chain solana_localnet`);
    assert.match(row(rows, 'code usdc').detail, new RegExp(`^the program at ${programs.native_swaps} is not the shipped spl_swaps \\(contracts/artifacts/solana/spl_swaps.so, sha256 [0-9a-f]{64}\\)$`));
    assert.equal(row(rows, 'code cbbtc').detail, 'solana_localnet:cbbtc has no HTLC program id: run hashlock deploy --chain solana_localnet');
    assert.deepEqual(rows.filter((r) => r.status === 'error').map((r) => r.check), ['code sol', 'code usdc', 'code cbbtc']);

    const mintAsProgram = await solanaPreflight(context({ chain: solanaChain((c) => (asset(c, 'cbbtc').htlc.address = mints.usdc!)) }));
    assert.equal(row(mintAsProgram, 'code cbbtc').detail, `${mints.usdc} holds an account of ${TOKEN_PROGRAM_ADDRESS}, not the spl_swaps program`);
  });

  test('a relayer and a solver inventory under their minimums', async () => {
    const rows = await solanaPreflight(context({ minimums: { relayer: SOL + 1n, inventory: new Map([['solana_localnet:usdc', 2_000_000_000n]]) } }));
    assert.deepEqual(rows.filter((r) => r.status === 'error').map((r) => [r.check, r.detail]), [
      ['balance relayer', `${SOL} lamports, under the minimum ${SOL + 1n}`],
      ['inventory usdc', '1000000000 usdc, under the minimum 2000000000'],
    ]);
    const unnamed = await solanaPreflight(context({ access: { rpc_url: net.chain.rpcUrl }, keys: {} }));
    assert.deepEqual(unnamed.filter((r) => r.status === 'error').map((r) => r.detail), [
      'a minimum is set, but no relayer key or chains.solana_localnet.relayer address',
      'a minimum is set, but no solver key or solvers[].addresses.solana_localnet',
    ]);
  });

  test('SPL decimals that differ from the registry', async () => {
    const rows = await solanaPreflight(context({ chain: solanaChain((c) => (asset(c, 'usdc').decimals = 9)) }));
    assert.deepEqual(rows.filter((r) => r.status === 'error').map((r) => [r.check, r.detail]), [['decimals usdc', `the mint ${mints.usdc} has 6 decimals, the registry says 9`]]);
  });

  test('a local clock an hour behind the chain, and a node out of reach: error rows, no throw', async () => {
    const ahead = await solanaPreflight(context({ now: Date.now() - 3_600_000 }));
    assert.equal(row(ahead, 'clock').status, 'error');
    const closed = await solanaPreflight(context({ access: { rpc_url: 'http://127.0.0.1:9' } }));
    assert.deepEqual(closed.map((r) => [r.check, r.status]), [['node', 'error']]);
  });
});
