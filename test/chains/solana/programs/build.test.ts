import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
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

test('a build is cached under a key of the sources and flags, and read back the same', async (t) => {
  const unavailable = await clangUnavailable();
  if (unavailable) {
    if (process.env.CI) throw new Error(unavailable);
    t.skip(unavailable);
    return;
  }
  const cacheDir = await mkdtemp(join(tmpdir(), 'hashlock-solana-build-'));
  try {
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
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
});
