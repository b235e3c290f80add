// Tests that need a real Litecoin Core regtest node. In CI (CI=true) a missing `litecoind` fails the
// test; elsewhere the test skips with a loud message.
import type { TestContext } from 'node:test';
import { findLitecoind, startLitecoind, type LitecoinNode } from '../../src/devnet/litecoind.ts';

/** A fresh regtest node for a test file, or undefined (the test is skipped) when none can run here. */
export async function litecoinNodeOrSkip(t: TestContext): Promise<LitecoinNode | undefined> {
  if (!findLitecoind()) {
    if (process.env.CI) throw new Error('litecoind is not on the PATH: .ci/run installs it (apt-get install litecoind)');
    console.warn('\n!!! SKIPPED: litecoind is not on the PATH; install it (apt-get install litecoind) to run the Bitcoin-family node tests\n');
    t.skip('litecoind is not installed');
    return undefined;
  }
  return startLitecoind();
}

/** A regtest node for a whole suite (started in `before`), or undefined outside CI without litecoind. */
export async function litecoinNodeForSuite(): Promise<LitecoinNode | undefined> {
  if (!findLitecoind()) {
    if (process.env.CI) throw new Error('litecoind is not on the PATH: .ci/run installs it (apt-get install litecoind)');
    console.warn('\n!!! SKIPPED: litecoind is not on the PATH; install it (apt-get install litecoind) to run the Bitcoin-family swap tests\n');
    return undefined;
  }
  return startLitecoind();
}
