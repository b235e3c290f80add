/**
 * Builds the project's Solana HTLC programs (contracts/solana/*.c) with clang-19 and the project's
 * SBPFv0 linker, for `npm run build:contracts` (which writes the programs the repository ships,
 * contracts/artifacts/solana/) and the tests that build them again. Results are cached under
 * .build/solana/, keyed by a hash of the C sources, the compiler flags and the linker's own source, so
 * a change to any of them rebuilds. When clang-19 is missing the build reports `{ unavailable }`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { SolanaProgramName } from '../../../chains/solana/program-artifacts.ts';
import { linkSbpfV0 } from './link.ts';

const run = promisify(execFile);

export const CLANG = 'clang-19';

/** -mcpu=v2: no 32-bit ALU or JMP32 instructions, whose meaning differs in SBPFv0. */
export const CLANG_FLAGS: readonly string[] = [
  '-target',
  'bpfel',
  '-mcpu=v2',
  '-O2',
  '-fPIC',
  '-ffreestanding',
  '-fno-builtin',
  '-mllvm',
  '-bpf-stack-size=4096',
  '-Wall',
  '-Wextra',
  '-Werror',
];

export type { SolanaProgramName };

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const CONTRACTS_DIR = join(REPO_ROOT, 'contracts', 'solana');
const DEFAULT_CACHE_DIR = join(REPO_ROOT, '.build', 'solana');
// The sources, also when this runs compiled from dist/.
const LINKER_SOURCES = ['link.ts', 'elf.ts', 'build.ts'].map((f) => join(REPO_ROOT, 'src', 'localnet', 'solana', 'programs', f));

export type BuildResult = { bytes: Uint8Array; path: string; cached: boolean } | { unavailable: string };

export interface BuildOptions {
  cacheDir?: string;
  clang?: string;
}

/** Why clang-19 cannot compile here, or undefined when it can. */
export async function clangUnavailable(clang = CLANG): Promise<string | undefined> {
  try {
    const { stdout } = await run(clang, ['--version']);
    return stdout.includes('clang') ? undefined : `${clang} --version did not name clang`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${clang} is not installed (apt-get install clang-19)` : `${clang} does not run: ${String(error)}`;
  }
}

/** The build's cache key: the C sources of the directory, the flags, the compiler name and the linker. */
async function buildKey(name: SolanaProgramName, clang: string): Promise<string> {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ name, clang, flags: CLANG_FLAGS }));
  const sources = (await readdir(CONTRACTS_DIR)).filter((f) => f.endsWith('.c') || f.endsWith('.h')).sort();
  for (const file of [...sources.map((f) => join(CONTRACTS_DIR, f)), ...LINKER_SOURCES]) {
    hash.update(file.slice(REPO_ROOT.length));
    hash.update(await readFile(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/** Compiles and links one program, or returns the cached build of the same sources and flags. */
export async function buildProgram(name: SolanaProgramName, options: BuildOptions = {}): Promise<BuildResult> {
  const clang = options.clang ?? CLANG;
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE_DIR;
  const key = await buildKey(name, clang);
  const path = join(cacheDir, `${name}-${key}.so`);
  if (existsSync(path)) return { bytes: new Uint8Array(await readFile(path)), path, cached: true };

  const unavailable = await clangUnavailable(clang);
  if (unavailable) return { unavailable };

  await mkdir(cacheDir, { recursive: true });
  const object = join(cacheDir, `${name}-${key}.${process.pid}.o`);
  try {
    await run(clang, [...CLANG_FLAGS, '-c', join(CONTRACTS_DIR, `${name}.c`), '-o', object]);
    const bytes = linkSbpfV0([{ name: `${name}.o`, bytes: new Uint8Array(await readFile(object)) }]);
    // Written aside and renamed, so a concurrent build never reads half a file.
    const partial = `${path}.${process.pid}.tmp`;
    await writeFile(partial, bytes);
    await rename(partial, path);
    return { bytes, path, cached: false };
  } finally {
    await rm(object, { force: true });
  }
}

/**
 * Compiles C source text to a relocatable object with clang-19: the program flags, with `-mcpu=` and
 * anything else overridable by `extraFlags` (the linker's tests build objects it must refuse).
 */
export async function compileObject(source: string, extraFlags: readonly string[] = [], clang = CLANG): Promise<Uint8Array> {
  const dir = join(DEFAULT_CACHE_DIR, 'tmp');
  await mkdir(dir, { recursive: true });
  const base = join(dir, `${process.pid}-${createHash('sha256').update(source).update(extraFlags.join(' ')).digest('hex').slice(0, 12)}`);
  const flags = extraFlags.some((f) => f.startsWith('-mcpu=')) ? CLANG_FLAGS.filter((f) => !f.startsWith('-mcpu=')) : CLANG_FLAGS;
  try {
    await writeFile(`${base}.c`, source);
    await run(clang, [...flags, ...extraFlags, '-c', `${base}.c`, '-o', `${base}.o`]);
    return new Uint8Array(await readFile(`${base}.o`));
  } finally {
    await rm(`${base}.c`, { force: true });
    await rm(`${base}.o`, { force: true });
  }
}
