/**
 * The Upgradeable Loader steps `hashlock deploy` and `hashlock dev` share, on a local chain (LiteSVM
 * behind JSON-RPC): the accounts they leave as the loader lays them out, and the loader's own check of
 * the ELF at deploy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyPairSigner, getAddressEncoder, lamports, type Address, type KeyPairSigner } from '@solana/kit';
import { LOADER_V3_ADDRESS, programDataAddress } from '../../../src/chains/solana/loader-v3.ts';
import { solanaProgram } from '../../../src/chains/solana/program-artifacts.ts';
import { deployUpgradeable, PACKET_DATA_BYTES, type LoaderAccess } from '../../../src/chains/solana/program-deploy.ts';
import { solanaRpc } from '../../../src/chains/solana/rpc.ts';
import { ElfFile } from '../../../src/localnet/solana/programs/elf.ts';
import { startTestLocalnet, type LocalnetHarness } from '../../helpers/solana-localnet.ts';

describe('deploy through the BPF Upgradeable Loader', () => {
  let net: LocalnetHarness;
  let payer: KeyPairSigner;
  let access: LoaderAccess;

  const deploy = async (elf: Uint8Array, program: KeyPairSigner, buffer: KeyPairSigner) =>
    deployUpgradeable(access, { label: 'test', elf, program, buffer, upgradeAuthority: payer.address });
  const accountData = async (at: Address): Promise<Uint8Array | undefined> => {
    const { value } = await net.rpc.getAccountInfo(at, { encoding: 'base64' }).send();
    return value ? Uint8Array.from(Buffer.from(value.data[0], 'base64')) : undefined;
  };

  before(async () => {
    // Slots stand still: with `processed`, what the chain ran counts as landed.
    net = await startTestLocalnet({ slotMs: 0 });
    payer = await generateKeyPairSigner();
    await net.rpc.requestAirdrop(payer.address, lamports(100_000_000_000n)).send();
    access = { rpc: solanaRpc(net.chain.rpcUrl), payer, commitment: 'processed' };
  });

  after(async () => {
    await net?.stop();
  });

  test('buffer, writes that fill a packet, DeployWithMaxDataLen: the program account and ProgramData as the loader lays them out', async () => {
    const elf = solanaProgram('native_swaps');
    const [program, buffer] = [await generateKeyPairSigner(), await generateKeyPairSigner()];
    const sent = async (): Promise<number> => {
      net.chain.advanceSlots(1);
      return (await net.rpc.getSignaturesForAddress(payer.address, { commitment: 'confirmed' }).send()).length;
    };
    const before = await sent();
    await deploy(elf, program, buffer);

    const writes = (await sent()) - before - 2;
    assert.ok(writes >= Math.ceil(elf.length / PACKET_DATA_BYTES) && writes <= Math.ceil(elf.length / 1_000), `${writes} writes of a ${elf.length}-byte ELF`);

    const account = (await net.rpc.getAccountInfo(program.address, { encoding: 'base64' }).send()).value!;
    assert.ok(account.executable);
    assert.equal(account.owner, LOADER_V3_ADDRESS);
    const programData = await programDataAddress(program.address);
    assert.deepEqual([...(await accountData(program.address))!], [2, 0, 0, 0, ...getAddressEncoder().encode(programData)], 'UpgradeableLoaderState::Program');
    const data = (await accountData(programData))!;
    assert.deepEqual(data.subarray(0, 4), Uint8Array.of(3, 0, 0, 0), 'UpgradeableLoaderState::ProgramData');
    assert.deepEqual([...data.subarray(12, 45)], [1, ...getAddressEncoder().encode(payer.address)], 'Some(the payer) is the upgrade authority');
    assert.deepEqual(data.subarray(45), elf, 'ProgramData holds the ELF after its 45-byte header, sized to it');
    assert.equal(await accountData(buffer.address), undefined, 'the buffer is consumed');
  });

  test('the loader refuses at deploy an ELF that names an unknown syscall', async () => {
    const elf = Uint8Array.from(solanaProgram('native_swaps'));
    const dynstr = new ElfFile(elf, 'native').section('.dynstr')!;
    const names = new TextDecoder().decode(elf.subarray(dynstr.offset, dynstr.offset + dynstr.size));
    elf.set(new TextEncoder().encode('sol_log_dat0'), dynstr.offset + names.indexOf('sol_log_data'));
    const program = await generateKeyPairSigner();
    await assert.rejects(deploy(elf, program, await generateKeyPairSigner()), /Unresolved symbol \(sol_log_dat0\)/);
    assert.equal(await accountData(program.address), undefined, 'no program was created');
  });
});
