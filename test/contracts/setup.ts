// Shared harness for the contract tests: a real anvil per test file, viem clients for anvil's funded
// dev accounts, solc-compiled artifacts (contracts/*.sol plus the test-only mocks/*.sol), and helpers
// for sending, expecting reverts and measuring exact balance changes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  maxUint256,
  parseEventLogs,
  sha256,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { contractArtifact, type ContractArtifact } from '../../src/chains/evm/contracts.ts';
import { startAnvil, type AnvilNode } from '../../src/localnet/evm/anvil.ts';
import { DEV_MNEMONIC } from '../../src/localnet/accounts.ts';

export const CHAIN_ID = 31337;

/** What a deployment needs of an artifact. */
export type Deployable = Pick<ContractArtifact, 'abi' | 'bytecode'>;

/** anvil's funded dev accounts, by role in these tests. */
export const ROLES = { deployer: 0, initiator: 1, redeemer: 2, relayer: 3, stranger: 4, feeSigner: 5, affiliate: 6, walletOwner: 7 } as const;
export type Role = keyof typeof ROLES;

export interface Call {
  address: Address;
  abi: Abi;
  functionName: string;
  args: readonly unknown[];
  value?: bigint;
}

/** Compiles the test-only contracts in test/contracts/mocks with the same solc as contracts.ts. */
export function mockArtifacts(): Record<string, Deployable> {
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string, callbacks: object): string };
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'mocks');
  const sources = Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith('.sol'))
      .map((f) => [f, { content: readFileSync(join(dir, f), 'utf8') }]),
  );
  const input = {
    language: 'Solidity',
    sources,
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const findImports = (path: string) => ({ contents: readFileSync(require.resolve(path), 'utf8') });
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const artifacts: Record<string, Deployable> = {};
  for (const file of Object.values(output.contracts)) {
    for (const [name, c] of Object.entries(file)) artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  return artifacts;
}

export type Chain = Awaited<ReturnType<typeof startChain>>;

/** Starts anvil (chain id 31337 unless told) and returns clients plus helpers bound to it. Call `stop()` in `after`. */
export async function startChain(chainId: number = CHAIN_ID) {
  const anvil: AnvilNode = await startAnvil({ chainId });
  const transport = http(anvil.rpcUrl);
  const chain = defineChain({
    id: chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const client = createPublicClient({ chain, transport, cacheTime: 0 });
  const testClient = createTestClient({ chain, transport, mode: 'anvil' });
  const account = (role: Role): HDAccount => mnemonicToAccount(DEV_MNEMONIC, { addressIndex: ROLES[role] });
  const addr = (role: Role): Address => account(role).address;
  const wallet = (role: Role) => createWalletClient({ account: account(role), chain, transport });

  async function deploy(artifact: Deployable | string, args: readonly unknown[], from: Role = 'deployer'): Promise<Address> {
    const { abi, bytecode } = typeof artifact === 'string' ? contractArtifact(artifact) : artifact;
    const hash = await wallet(from).deployContract({ abi, bytecode, args });
    const receipt = await client.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    return getAddress(receipt.contractAddress!);
  }

  /** Sends `call` from `from`, waits for it to be mined and asserts it succeeded. */
  async function send(from: Role, call: Call): Promise<TransactionReceipt> {
    const hash = await wallet(from).writeContract({ ...call, chain, account: account(from) });
    const receipt = await client.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success', `${call.functionName} reverted`);
    return receipt;
  }

  /**
   * Asserts that `call` from `from` reverts with the custom error `errorName`, simulated in the pending
   * block (the block the transaction would be mined in). Returns the error's arguments.
   */
  async function expectRevert(from: Role, call: Call, errorName: string): Promise<readonly unknown[] | undefined> {
    try {
      await client.simulateContract({ ...call, account: account(from), blockTag: 'pending' });
    } catch (err) {
      const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
      assert.ok(reverted instanceof ContractFunctionRevertedError, `${call.functionName}: expected ${errorName}, got ${String(err)}`);
      assert.equal(reverted.data?.errorName, errorName, `${call.functionName}: ${reverted.shortMessage}`);
      return reverted.data?.args;
    }
    assert.fail(`${call.functionName} did not revert (expected ${errorName})`);
  }

  /**
   * Runs `action` and asserts the exact balance change of every address in `expected` (addresses not
   * listed are not watched). For ether, the gas the transaction sender paid is added back, so the
   * deltas are what the contract moved.
   */
  async function expectDeltas(
    balanceOf: (a: Address) => Promise<bigint>,
    expected: ReadonlyArray<readonly [string, Address, bigint]>,
    action: () => Promise<TransactionReceipt>,
    options: { native?: boolean } = {},
  ): Promise<TransactionReceipt> {
    const before = await Promise.all(expected.map(([, a]) => balanceOf(a)));
    const receipt = await action();
    const after = await Promise.all(expected.map(([, a]) => balanceOf(a)));
    const fee = options.native ? receipt.gasUsed * receipt.effectiveGasPrice : 0n;
    const actual = expected.map(([label, a], i) => [label, after[i]! - before[i]! + (a.toLowerCase() === receipt.from.toLowerCase() ? fee : 0n)]);
    assert.deepEqual(actual, expected.map(([label, , d]) => [label, d]));
    return receipt;
  }

  const ethBalance = (a: Address) => client.getBalance({ address: a });
  const tokenBalance = (token: Address) => async (a: Address) =>
    (await client.readContract({ address: token, abi: contractArtifact('TestToken').abi, functionName: 'balanceOf', args: [a] })) as bigint;

  /** The decoded logs of `receipt` emitted by `address`, as [eventName, args] pairs. */
  function events(receipt: TransactionReceipt, abi: Abi, address: Address): Array<[string, Record<string, unknown>]> {
    return parseEventLogs({ abi, logs: receipt.logs })
      .filter((l) => l.address.toLowerCase() === address.toLowerCase())
      .map((l) => [l.eventName, l.args as Record<string, unknown>]);
  }

  /** Mines blocks until the latest one is `target` (the next transaction then lands in `target + 1`). */
  async function mineTo(target: bigint): Promise<void> {
    const now = await client.getBlockNumber();
    if (target > now) await testClient.mine({ blocks: Number(target - now) });
    assert.equal(await client.getBlockNumber(), target);
  }

  return { anvil, chain, client, testClient, account, addr, wallet, deploy, send, expectRevert, expectDeltas, ethBalance, tokenBalance, events, mineTo, stop: () => anvil.stop() };
}

/** A random 32-byte secret and its sha256. */
export function newSecret(): { secret: Hex; secretHash: Hex } {
  const secret = toHex(crypto.getRandomValues(new Uint8Array(32)));
  return { secret, secretHash: sha256(secret) };
}

/** An HTLC order's terms, as the HTLC contract tests write them. */
export interface HtlcTerms {
  initiator: Address;
  redeemer: Address;
  timelock: bigint;
  amount: bigint;
  secret: Hex;
  secretHash: Hex;
}

/** Terms from the initiator to the redeemer with a new secret and the test's amount and timelock; `over` replaces any. */
export function htlcTerms(c: Chain, base: { amount: bigint; timelock: bigint }, over: Partial<HtlcTerms> = {}): HtlcTerms {
  return { initiator: c.addr('initiator'), redeemer: c.addr('redeemer'), timelock: base.timelock, amount: base.amount, ...newSecret(), ...over };
}

/** `orders(id)` of an HTLC, as the contract returns it. */
export const readHtlcOrder = async (c: Chain, htlc: Address, abi: Abi, id: Hex) =>
  (await c.client.readContract({ address: htlc, abi, functionName: 'orders', args: [id] })) as readonly [Address, Address, bigint, bigint, bigint, bigint];

/** Mints a thousand `amount`s of the token to the initiator, the relayer and the redeemer, each approving the HTLC for all it has. */
export async function fundTokenHolders(c: Chain, token: Address, tokenAbi: Abi, htlc: Address, amount: bigint): Promise<void> {
  for (const role of ['initiator', 'relayer', 'redeemer'] as const) {
    await c.send('deployer', { address: token, abi: tokenAbi, functionName: 'mint', args: [c.addr(role), 1000n * amount] });
    await c.send(role, { address: token, abi: tokenAbi, functionName: 'approve', args: [htlc, maxUint256] });
  }
}
