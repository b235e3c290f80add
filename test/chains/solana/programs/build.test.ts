import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { solanaProgram, SOLANA_PROGRAMS } from '../../../../src/chains/solana/program-artifacts.ts';
import { buildProgram, clangUnavailable } from '../../../../src/localnet/solana/programs/build.ts';

test('without clang-19 the build reports why instead of throwing', async () => {
  const cacheDir = await mkdtemp(join(tmpdir(), 'hashlock-solana-build-'));
  try {
    const result = await buildProgram('native_swaps', { cacheDir, clang: 'clang-19-not-installed-here' });
    assert.deepEqual(result, { unavailable: 'clang-19-not-installed-here is not installed (apt-get install clang-19)' });
    assert.deepEqual(await readdir(cacheDir), []);
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
});

/** Runs `work` with an empty build cache where clang-19 is installed; elsewhere skips it (fails in CI). */
async function withClang(t: TestContext, work: (cacheDir: string) => Promise<void>): Promise<void> {
  const unavailable = await clangUnavailable();
  if (unavailable) {
    if (process.env.CI) throw new Error(unavailable);
    t.skip(unavailable);
    return;
  }
  const cacheDir = await mkdtemp(join(tmpdir(), 'hashlock-solana-build-'));
  try {
    await work(cacheDir);
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

test('a build is cached under a key of the sources and flags, and read back the same', (t) =>
  withClang(t, async (cacheDir) => {
    const first = await buildProgram('spl_swaps', { cacheDir });
    assert.ok(!('unavailable' in first));
    assert.equal(first.cached, false);
    assert.match(first.path, /spl_swaps-[0-9a-f]{16}\.so$/);
    const second = await buildProgram('spl_swaps', { cacheDir });
    assert.ok(!('unavailable' in second));
    assert.equal(second.cached, true);
    assert.equal(second.path, first.path);
    assert.deepEqual(second.bytes, first.bytes);
    assert.deepEqual(await readdir(cacheDir), [first.path.slice(cacheDir.length + 1)], 'no object files or partial writes left behind');
  }));

test('the programs the repository ships are what contracts/solana builds to now, byte for byte (npm run build:contracts writes them)', (t) =>
  withClang(t, async (cacheDir) => {
    for (const name of SOLANA_PROGRAMS) {
      const built = await buildProgram(name, { cacheDir });
      assert.ok(!('unavailable' in built));
      assert.equal(built.cached, false, 'built here, not read from a cache');
      assert.ok(Buffer.from(built.bytes).equals(Buffer.from(solanaProgram(name))), `${name}: the shipped .so differs from a build of the sources`);
    }
  }));
