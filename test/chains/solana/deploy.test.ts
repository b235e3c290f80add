/**
 * `hashlock deploy` on a Solana chain: the Solana deployer against a local chain started with no
 * programs, through its JSON-RPC only, as against a cluster.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { address, createKeyPairSignerFromPrivateKeyBytes, generateKeyPairSigner, lamports, type Address, type Signature } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { chainAdapter } from '../../../src/chains/adapters.ts';
import { nativeInitiateInstruction } from '../../../src/chains/solana/instructions.ts';
import {
  BUFFER_HEADER_BYTES,
  decodeProgramAccount,
  decodeProgramData,
  initializeBufferInstruction,
  LOADER_V3_ADDRESS,
  PROGRAM_DATA_HEADER_BYTES,
  writeInstruction,
} from '../../../src/chains/solana/loader-v3.ts';
import { deployUpgradeable, holdsElf, readProgram, type LoaderAccess } from '../../../src/chains/solana/program-deploy.ts';
import { solanaRpc } from '../../../src/chains/solana/rpc.ts';
import { deployerProgramSigner } from '../../../src/chains/solana/deploy.ts';
import { findProgramAddress } from '../../../src/chains/solana/pda.ts';
import { solanaProgram, SOLANA_PROGRAMS } from '../../../src/chains/solana/program-artifacts.ts';
import { swapAccountSeeds } from '../../../src/chains/solana/program.ts';
import { Registry, type Chain } from '../../../src/chains/registry.ts';
import type { ChainDeployment } from '../../../src/deploy/deployment-file.ts';
import { WrongChainError, type DeployContext, type FamilyDeployer } from '../../../src/deploy/family-deployer.ts';
import { sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness, type SolanaRpc } from '../../helpers/solana-localnet.ts';
import { testRegistryFile } from '../../helpers/test-registry.ts';

const SOL = 1_000_000_000n;
const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The localnet registry's Solana chain with its HTLC addresses empty (`hashlock deploy` fills them), on `network`. */
function solanaChain(network = 'localnet', addresses: Record<string, string> = {}): Chain {
  const file = testRegistryFile();
  const chain = file.chains.find((c) => c.chain === 'solana_localnet')!;
  chain.network = network;
  for (const asset of chain.assets) asset.htlc.address = addresses[asset.symbol] ?? '';
  file.chains = [chain];
  return new Registry(file, 'test', { undeployed: true }).chain('solana_localnet')!;
}

async function waitLanded(rpc: SolanaRpc, signature: Signature): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
    if (status?.err) throw new Error(`${signature} failed: ${JSON.stringify(status.err, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    if (status && status.confirmationStatus !== 'processed') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${signature} not confirmed`);
}

/** A fresh deployer key, funded as a faucet would: requestAirdrop, waited for. */
async function fundedDeployer(rpc: SolanaRpc, sol: bigint): Promise<{ key: Uint8Array; address: Address }> {
  const key = Uint8Array.from(randomBytes(32));
  const signer = await createKeyPairSignerFromPrivateKeyBytes(key);
  if (sol > 0n) await waitLanded(rpc, await rpc.requestAirdrop(signer.address, lamports(sol * SOL)).send());
  return { key, address: signer.address };
}

async function deployerSignatures(rpc: SolanaRpc, of: Address): Promise<number> {
  return (await rpc.getSignaturesForAddress(of, { commitment: 'confirmed' }).send()).length;
}

describe('hashlock deploy on a Solana chain (local chain, JSON-RPC only)', () => {
  let net: LocalnetHarness;
  let deploy: FamilyDeployer;
  let deployer: { key: Uint8Array; address: Address };
  let authority: Address;
  let first: ChainDeployment;
  const lines: string[] = [];

  const context = (chain: Chain, key: Uint8Array, options: Record<string, string> = {}, previous?: ChainDeployment): DeployContext => ({
    chain,
    access: { rpc_url: net.chain.rpcUrl },
    deployerKey: key,
    assets: chain.assets,
    wholeChain: true,
    previous,
    options,
    log: (line) => lines.push(line),
  });

  before(async () => {
    // Slots move on their own, as a cluster's do: the deployer waits for each step to be confirmed.
    net = await startTestLocalnet({ slotMs: 20 });
    deploy = await chainAdapter(solanaChain())!.deployer!();
    deployer = await fundedDeployer(net.rpc, 10n);
    authority = (await generateKeyPairSigner()).address;
  });

  after(async () => {
    await net?.stop();
  });

  test('deploys both programs through the loader, with the upgrade authority named', async () => {
    const started = Date.now();
    first = await deploy(context(solanaChain(), deployer.key, { upgradeAuthority: authority }));
    console.log(`two programs deployed in ${Date.now() - started} ms:\n${lines.join("\n")}`);

    assert.equal(first.chain_id, await net.rpc.getGenesisHash().send());
    assert.equal(first.deployer, deployer.address);
    assert.deepEqual(first.contracts.map((c) => [c.contract, c.assets]), [
      ['native_swaps', ['solana_localnet:sol']],
      ['spl_swaps', ['solana_localnet:usdc', 'solana_localnet:cbbtc']],
    ]);
    for (const name of SOLANA_PROGRAMS) {
      const contract = first.contracts.find((c) => c.contract === name)!;
      const elf = solanaProgram(name);
      assert.equal(contract.code_hash, sha256Hex(elf));
      assert.equal(contract.address, (await deployerProgramSigner(deployer.key, name)).address, `${name}: at the deployer's own program id`);
      assert.ok(contract.transaction, `${name}: the deploying transaction is recorded`);
      assert.equal(first.details?.[`upgrade_authority.${contract.address}`], authority);

      const program = (await net.rpc.getAccountInfo(address(contract.address), { encoding: 'base64' }).send()).value!;
      assert.equal(program.owner, LOADER_V3_ADDRESS);
      assert.equal(program.executable, true);
      const { programData } = decodeProgramAccount(Buffer.from(program.data[0], 'base64'))!;
      const data = (await net.rpc.getAccountInfo(programData, { encoding: 'base64' }).send()).value!;
      const state = decodeProgramData(Buffer.from(data.data[0], 'base64'))!;
      assert.equal(state.authority, authority, `${name}: ProgramData's upgrade authority is the one named`);
      assert.deepEqual(Buffer.from(state.code), Buffer.from(elf), `${name}: ProgramData holds the artifact after its ${PROGRAM_DATA_HEADER_BYTES}-byte header`);
    }
    assert.notEqual(first.contracts[0]!.address, first.contracts[1]!.address);
  });

  test('a swap runs against the deployed native program: initiate', async () => {
    const program = address(first.contracts.find((c) => c.contract === 'native_swaps')!.address);
    const initiator = await generateKeyPairSigner();
    await waitLanded(net.rpc, await net.rpc.requestAirdrop(initiator.address, lamports(2n * SOL)).send());
    const secretHash = Uint8Array.from(createHash('sha256').update(randomBytes(32)).digest());
    const amount = SOL / 2n;
    const instruction = await nativeInitiateInstruction({ program, initiator: initiator.address, args: { amount, expiresInSlots: 100n, redeemer: (await generateKeyPairSigner()).address, secretHash } });
    const tx = await signedTransaction(net.rpc, initiator, [instruction]);
    await waitLanded(net.rpc, await sendWire(net.rpc, tx.wire));
    const [swapAccount] = await findProgramAddress(program, swapAccountSeeds('native', initiator.address, secretHash));
    const swap = (await net.rpc.getAccountInfo(swapAccount, { encoding: 'base64' }).send()).value;
    assert.equal(swap?.owner, program, 'the swap account belongs to the deployed program');
    assert.ok(swap.lamports >= amount, 'it escrows the amount');
  });

  test('a second run deploys nothing and answers the same ids', async () => {
    const sent = await deployerSignatures(net.rpc, deployer.address);
    const balance = (await net.rpc.getBalance(deployer.address).send()).value;
    const again = await deploy(context(solanaChain(), deployer.key, { upgradeAuthority: authority }, first));
    assert.deepEqual(again.contracts.map((c) => [c.contract, c.address, c.transaction]), first.contracts.map((c) => [c.contract, c.address, undefined]));
    assert.deepEqual(again.details, first.details);
    assert.equal(await deployerSignatures(net.rpc, deployer.address), sent, 'no transaction sent');
    assert.equal((await net.rpc.getBalance(deployer.address).send()).value, balance);
    // Without --upgrade-authority a found program keeps the authority it has.
    const unnamed = await deploy(context(solanaChain(), deployer.key));
    assert.deepEqual(unnamed.details, first.details);
    // Another deployer key (unfunded: it could send nothing) finds the programs the deployment file records.
    const other = await fundedDeployer(net.rpc, 0n);
    const recorded = await deploy(context(solanaChain(), other.key, {}, first));
    assert.deepEqual(recorded.contracts.map((c) => c.address), first.contracts.map((c) => c.address));
  });

  test('by default the deployer is the upgrade authority; one found so is handed to --upgrade-authority', async () => {
    const own = await fundedDeployer(net.rpc, 5n);
    const chain = solanaChain();
    const native = { ...context(chain, own.key), assets: chain.assets.filter((a) => a.id === 'solana_localnet:sol') };
    const deployed = await deploy(native);
    assert.deepEqual(deployed.contracts.map((c) => c.contract), ['native_swaps']);
    const id = deployed.contracts[0]!.address;
    assert.equal(deployed.details?.[`upgrade_authority.${id}`], own.address);
    const handed = await deploy({ ...native, options: { upgradeAuthority: authority } });
    assert.equal(handed.contracts[0]!.transaction, undefined);
    assert.equal(handed.details?.[`upgrade_authority.${id}`], authority);
    // Now only the named authority could change it: another one named is refused.
    const third = (await generateKeyPairSigner()).address;
    await assert.rejects(deploy({ ...native, options: { upgradeAuthority: third } }), new RegExp(`upgrade authority is ${authority}, not ${third} as --upgrade-authority names`));
    await assert.rejects(deploy({ ...native, options: { upgradeAuthority: 'not-an-address' } }), /--upgrade-authority: "not-an-address" is not a base58 Solana address/);
  });

  test('a registry program id holding other code is refused before anything is sent', async () => {
    const native = first.contracts.find((c) => c.contract === 'native_swaps')!.address;
    const sent = await deployerSignatures(net.rpc, deployer.address);
    await assert.rejects(
      deploy(context(solanaChain('localnet', { usdc: native, cbbtc: native }), deployer.key)),
      new RegExp(`spl_swaps of solana_localnet:usdc, solana_localnet:cbbtc: the registry's htlc.address ${native} holds another program than .*spl_swaps\\.so`),
    );
    // A registry id that holds nothing and is not the deployer's own cannot be deployed to.
    const elsewhere = (await generateKeyPairSigner()).address;
    await assert.rejects(deploy(context(solanaChain('localnet', { sol: elsewhere }), deployer.key)), /holds no program, and the deployer can deploy native_swaps only at its own program id/);
    assert.equal(await deployerSignatures(net.rpc, deployer.address), sent);
  });

  test('a node serving another network than the registry names is refused before anything is sent', async () => {
    const fresh = await fundedDeployer(net.rpc, 10n);
    const sent = await deployerSignatures(net.rpc, fresh.address);
    const refusal = await deploy(context(solanaChain('devnet'), fresh.key)).then(
      () => assert.fail('deployed to a local chain under a devnet registry'),
      (err: unknown) => err,
    );
    assert.ok(refusal instanceof WrongChainError);
    assert.match(refusal.message, /solana_localnet: the node serves chain solana localnet \(genesis \w+\), the registry names solana devnet \(genesis EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG\); nothing was deployed/);
    assert.equal(await deployerSignatures(net.rpc, fresh.address), sent);
  });

  test('a deployment that stopped halfway resumes its buffer, and takes a program address someone sent lamports to', async () => {
    const payer = await createKeyPairSignerFromPrivateKeyBytes(Uint8Array.from(randomBytes(32)));
    await waitLanded(net.rpc, await net.rpc.requestAirdrop(payer.address, lamports(5n * SOL)).send());
    const [program, buffer] = [await generateKeyPairSigner(), await generateKeyPairSigner()];
    const elf = solanaProgram('native_swaps');
    // The chain as a run left it: the buffer created and written whole, but for 10 bytes; lamports at the program's address.
    const space = BigInt(BUFFER_HEADER_BYTES + elf.length);
    const rent = await net.rpc.getMinimumBalanceForRentExemption(space).send();
    const create = await signedTransaction(net.rpc, payer, [
      getCreateAccountInstruction({ payer, newAccount: buffer, lamports: rent, space, programAddress: LOADER_V3_ADDRESS }),
      initializeBufferInstruction(buffer.address, payer.address),
    ]);
    await waitLanded(net.rpc, await sendWire(net.rpc, create.wire));
    const written = Uint8Array.from(elf);
    written.fill(0xee, 100, 110);
    const writes: Signature[] = [];
    for (let offset = 0; offset < written.length; offset += 900) {
      const tx = await signedTransaction(net.rpc, payer, [writeInstruction(buffer.address, payer.address, offset, written.subarray(offset, offset + 900))]);
      writes.push(await sendWire(net.rpc, tx.wire));
    }
    for (const signature of writes) await waitLanded(net.rpc, signature);
    await waitLanded(net.rpc, await net.rpc.requestAirdrop(program.address, lamports(1_000_000n)).send());
    assert.deepEqual(await readProgram({ rpc: solanaRpc(net.chain.rpcUrl), payer, commitment: 'confirmed' }, program.address), { kind: 'absent', lamports: 1_000_000n });

    const steps: string[] = [];
    const access: LoaderAccess = { rpc: solanaRpc(net.chain.rpcUrl), payer, commitment: 'confirmed', log: (line) => steps.push(line) };
    await deployUpgradeable(access, { label: 'resumed', elf, program, buffer, upgradeAuthority: payer.address });
    assert.deepEqual(steps.map((s) => s.replace(/ [1-9A-HJ-NP-Za-km-z]{32,44}/g, ' <address>')), [
      `resumed: write 1 chunk of the ${elf.length}-byte ELF into <address>`,
      'resumed: deploy at <address> (DeployWithMaxDataLen)',
    ]);
    const deployed = await readProgram(access, program.address);
    assert.ok(deployed.kind === 'upgradeable' && holdsElf(deployed.code, elf) && deployed.authority === payer.address);
    assert.equal((await net.rpc.getAccountInfo(buffer.address).send()).value, null, 'the buffer is closed by the deployment');
  });
});
