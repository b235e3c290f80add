// `hashlock dev --external-solver` funds the external solver's Litecoin key-path wallet as it funds the
// dev solver's, once: a restart that finds the wallet holding its funds pays nothing more.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { fundSolverWallet, SOLVER_FUNDS, startLitecoinDevnet } from '../../src/localnet/bitcoin/devnet.ts';
import { localnetRegistry } from '../helpers/fixtures.ts';
import { confirmedBalance, litecoindOrSkip } from '../helpers/litecoin.ts';

test("an external solver's Litecoin wallet is funded with the dev solver's amount, once", async (t) => {
  if (!litecoindOrSkip(t, "the dev external solver's Litecoin funding")) return;
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-ltc-fund-'));
  const chain = localnetRegistry().chain('litecoin_localnet')!;
  const key = (): Uint8Array => schnorr.utils.randomSecretKey();
  const devnet = await startLitecoinDevnet({ dataDir, chain, solverKey: key(), userKey: key(), blockTimeMs: 0 });
  assert.ok(devnet);
  try {
    const maker = key();
    const wallet = walletAddress(maker, chain.network);
    assert.equal(await confirmedBalance(devnet.node, wallet), 0n);
    await fundSolverWallet(devnet.node, chain, maker);
    assert.equal(await confirmedBalance(devnet.node, wallet), SOLVER_FUNDS, 'funded, and mined');
    const height = await devnet.node.rpc.getBlockCount();
    await fundSolverWallet(devnet.node, chain, maker);
    assert.equal(await confirmedBalance(devnet.node, wallet), SOLVER_FUNDS, 'not funded again');
    assert.equal(await devnet.node.rpc.getBlockCount(), height, 'no block mined for nothing');
  } finally {
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
