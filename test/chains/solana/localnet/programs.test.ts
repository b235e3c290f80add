import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { address, generateKeyPairSigner, getAddressDecoder } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { getInitializeMint2Instruction, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { LiteSVM } from 'litesvm';
import { fundedSigner, sendWire, signedTransaction, startTestLocalnet, type LocalnetHarness } from '../../../helpers/solana-localnet.ts';

/** Where an upgradeable program's ELF starts in its programdata account (after slot and authority). */
const PROGRAMDATA_HEADER = 45;

/** The SPL Token program's ELF, installed again under another id: a program of our own for the test. */
function tokenProgramElf(): Uint8Array {
  const svm = new LiteSVM();
  const program = svm.getAccount(TOKEN_PROGRAM_ADDRESS);
  assert.ok(program.exists);
  const programData = svm.getAccount(getAddressDecoder().decode(program.data.subarray(4, 36)));
  assert.ok(programData.exists);
  return new Uint8Array(programData.data.subarray(PROGRAMDATA_HEADER));
}

async function createMintWith(h: LocalnetHarness, programAddress: ReturnType<typeof address>) {
  const payer = await fundedSigner(h.rpc);
  const mint = await generateKeyPairSigner();
  const space = BigInt(getMintSize());
  const rent = await h.rpc.getMinimumBalanceForRentExemption(space).send();
  const tx = await signedTransaction(h.rpc, payer, [
    getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress }),
    getInitializeMint2Instruction({ mint: mint.address, decimals: 9, mintAuthority: payer.address }, { programAddress }),
  ]);
  await sendWire(h.rpc, tx.wire);
  h.chain.advanceSlots(1);
  const signatures = await h.rpc.getSignaturesForAddress(programAddress, { commitment: 'confirmed', limit: 1 }).send();
  assert.equal(signatures[0]?.signature, tx.signature);
  const info = await h.rpc.getAccountInfo(mint.address, { encoding: 'base64', commitment: 'confirmed' }).send();
  assert.equal(info.value?.owner, programAddress);
  assert.equal(Buffer.from(info.value.data[0], 'base64')[44], 9);
}

describe('Solana localnet: programs installed at start', () => {
  it('runs a program given at start, on a new chain and again after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-solana-programs-'));
    const programId = address((await generateKeyPairSigner()).address);
    const programs = [{ programId, elf: tokenProgramElf() }];
    try {
      const first = await startTestLocalnet({ dataDir, slotMs: 0, programs });
      try {
        assert.equal((await first.rpc.getAccountInfo(programId, { encoding: 'base64' }).send()).value?.executable, true);
        await createMintWith(first, programId);
      } finally {
        await first.stop();
      }
      const second = await startTestLocalnet({ dataDir, slotMs: 0, programs });
      try {
        await createMintWith(second, programId);
        // The default SPL Token program comes back from the snapshot too.
        await createMintWith(second, TOKEN_PROGRAM_ADDRESS);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
