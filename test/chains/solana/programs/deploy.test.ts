/** The Upgradeable Loader deploy path, in LiteSVM: what it writes, and that the loader re-checks the ELF. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateKeyPairSigner, getAddressEncoder, lamports } from '@solana/kit';
import { LiteSVM } from 'litesvm';
import { ElfFile } from '../../../../src/localnet/solana/programs/elf.ts';
import { BPF_LOADER_UPGRADEABLE_ADDRESS, deployProgram, programDataAddress, type DeployTransport } from '../../../../src/localnet/solana/programs/deploy.ts';
import { solanaProgramsForSuite } from '../../../helpers/solana.ts';

const built = await solanaProgramsForSuite();

function liteSvmTransport(svm: LiteSVM): DeployTransport & { sent: number } {
  const transport = {
    sent: 0,
    latestBlockhash: async () => ({ blockhash: svm.latestBlockhash(), lastValidBlockHeight: 0n }),
    minimumBalanceForRentExemption: async (space: bigint) => svm.minimumBalanceForRentExemption(space),
    send: async (transaction: Parameters<DeployTransport['send']>[0]) => {
      const result = svm.sendTransaction(transaction);
      if ('err' in result) throw new Error(`${result.toString()}\n${result.meta().logs().join('\n')}`);
      transport.sent++;
    },
  };
  return transport;
}

describe('deploy through the BPF Upgradeable Loader', () => {
  test('buffer, chunked writes and DeployWithMaxDataLen leave the program executable with its bytes in ProgramData', async () => {
    const svm = new LiteSVM();
    const payer = await generateKeyPairSigner();
    svm.airdrop(payer.address, lamports(100_000_000_000n));
    const program = await generateKeyPairSigner();
    const bytes = built.native_swaps;
    const transport = liteSvmTransport(svm);
    const deployed = await deployProgram({ program, payer, bytes, transport, chunkBytes: 900 });
    assert.equal(deployed.transactions, 2 + Math.ceil(bytes.length / 900));
    assert.equal(transport.sent, deployed.transactions);

    const programAccount = svm.getAccount(program.address);
    assert.ok(programAccount.exists && programAccount.executable);
    assert.equal(programAccount.programAddress, BPF_LOADER_UPGRADEABLE_ADDRESS);
    const programData = await programDataAddress(program.address);
    assert.equal(deployed.programData, programData);
    assert.deepEqual([...programAccount.data], [2, 0, 0, 0, ...getAddressEncoder().encode(programData)], 'UpgradeableLoaderState::Program');
    const data = svm.getAccount(programData);
    assert.ok(data.exists);
    assert.deepEqual(data.data.subarray(45, 45 + bytes.length), bytes, 'ProgramData holds the ELF after its 45-byte header');
    assert.deepEqual([...data.data.subarray(13, 45)], [...getAddressEncoder().encode(payer.address)], 'the payer is the upgrade authority');
    assert.equal(svm.getAccount(deployed.buffer).exists, false, 'the buffer is consumed');
  });

  test('the loader refuses at deploy an ELF that names an unknown syscall', async () => {
    const svm = new LiteSVM();
    const payer = await generateKeyPairSigner();
    svm.airdrop(payer.address, lamports(100_000_000_000n));
    const bytes = Uint8Array.from(built.native_swaps);
    const dynstr = new ElfFile(bytes, 'native').section('.dynstr')!;
    const names = new TextDecoder().decode(bytes.subarray(dynstr.offset, dynstr.offset + dynstr.size));
    const at = dynstr.offset + names.indexOf('sol_log_data');
    bytes.set(new TextEncoder().encode('sol_log_dat0'), at);
    const deploy = deployProgram({ program: await generateKeyPairSigner(), payer, bytes, transport: liteSvmTransport(svm) });
    await assert.rejects(deploy, /Unresolved symbol \(sol_log_dat0\)/);
  });
});
