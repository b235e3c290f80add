import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { fundedSigner, localnetRpc, rawRpc, sendWire, signedTransaction, startTestLocalnet } from '../../../helpers/solana-localnet.ts';
import { until } from '../../../helpers/wait.ts';

const SOL = 1_000_000_000n;

describe('Solana localnet: the data directory', () => {
  it('restarts with the balances, slot, blockhashes and signatures it stopped with', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-solana-restart-'));
    try {
      const first = await startTestLocalnet({ dataDir, slotMs: 0 });
      const payer = await fundedSigner(first.rpc, 5n);
      const to = await generateKeyPairSigner();
      const tx = await signedTransaction(first.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: 2n * SOL })]);
      await sendWire(first.rpc, tx.wire);
      first.chain.advanceSlots(3);
      const stoppedAt = first.chain.slot();
      const genesis = await first.rpc.getGenesisHash().send();
      const balances = [(await first.rpc.getBalance(payer.address).send()).value, (await first.rpc.getBalance(to.address).send()).value];
      const signatures = await first.rpc.getSignaturesForAddress(to.address, { commitment: 'confirmed' }).send();
      assert.equal(signatures.length, 1);
      await first.stop();

      const second = await startTestLocalnet({ dataDir, slotMs: 0 });
      try {
        assert.equal(second.chain.slot(), stoppedAt + 1, 'resumes after the saved slot');
        assert.equal(await second.rpc.getGenesisHash().send(), genesis);
        assert.deepEqual([(await second.rpc.getBalance(payer.address).send()).value, (await second.rpc.getBalance(to.address).send()).value], balances);
        assert.deepEqual(await second.rpc.getSignaturesForAddress(to.address, { commitment: 'confirmed' }).send(), signatures);
        const restored = await second.rpc.getTransaction(tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
        assert.equal(restored?.meta?.fee, 5000n);
        assert.deepEqual(restored?.meta?.postBalances.slice(0, 2), balances);
        // Its blockhash is still young: the repeat is refused as already processed, not run again.
        const repeat = await rawRpc(second.chain.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.wire, { encoding: 'base64' }] });
        assert.equal(repeat.error.data.err, 'AlreadyProcessed');
        // And new transactions go on from there, on blockhashes made before the restart too.
        const again = await signedTransaction(second.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
        await sendWire(second.rpc, again.wire);
        assert.equal((await second.rpc.getBalance(to.address, { commitment: 'processed' }).send()).value, 3n * SOL);
      } finally {
        await second.stop();
      }

      // A save cut short leaves lines meta.json does not count: they are dropped on load.
      appendFileSync(join(dataDir, 'transactions.jsonl'), '{"signature":"half a line');
      const third = await startTestLocalnet({ dataDir, slotMs: 0 });
      try {
        assert.equal((await third.rpc.getSignaturesForAddress(to.address, { commitment: 'confirmed' }).send()).length, 2);
        const more = await signedTransaction(third.rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
        await sendWire(third.rpc, more.wire);
      } finally {
        await third.stop();
      }
      // The half line was cut off before the next save appended: airdrop and three transfers, each a whole line.
      const lines = readFileSync(join(dataDir, 'transactions.jsonl'), 'utf8').trimEnd().split('\n');
      assert.equal(lines.length, 4);
      assert.ok(lines.every((line) => typeof (JSON.parse(line) as { signature: string }).signature === 'string'));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('survives kill -9, losing at most the last save interval', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-solana-kill-'));
    const script = join(dirname(fileURLToPath(import.meta.url)), 'localnet-process.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', script, dataDir, '20'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const rpcUrl = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { rpcUrl: string }).rpcUrl));
        child.once('exit', (code) => reject(new Error(`localnet exited with ${code}`)));
      });
      const rpc = localnetRpc(rpcUrl);
      const payer = await fundedSigner(rpc, 5n);
      const to = await generateKeyPairSigner();
      const tx = await signedTransaction(rpc, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: SOL })]);
      await sendWire(rpc, tx.wire);
      const slotBeforeKill = Number(await rpc.getSlot({ commitment: 'processed' }).send());
      // Both transactions (airdrop and transfer) committed by a periodic save, then the process dies unannounced.
      await until('a save with both transactions', () => {
        try {
          const meta = JSON.parse(readFileSync(join(dataDir, 'meta.json'), 'utf8')) as { transactionCount: number; slots: { slot: number }[] };
          return meta.transactionCount >= 2 && meta.slots[meta.slots.length - 1]!.slot >= slotBeforeKill ? true : undefined;
        } catch {
          return undefined;
        }
      }, 10_000, 5);
      const lastSeenSlot = Number(await rpc.getSlot({ commitment: 'processed' }).send());
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));

      const restarted = await startTestLocalnet({ dataDir, slotMs: 20 });
      try {
        // The slots made after the last save are lost with the process, but the clock makes up for the time: no client sees the slot go back.
        assert.ok(restarted.chain.slot() > lastSeenSlot, `restarted at ${restarted.chain.slot()}, last seen ${lastSeenSlot}`);
        assert.equal((await restarted.rpc.getBalance(to.address).send()).value, SOL);
        const [status] = (await restarted.rpc.getSignatureStatuses([tx.signature], { searchTransactionHistory: true }).send()).value;
        assert.equal(status?.err, null);
      } finally {
        await restarted.stop();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
