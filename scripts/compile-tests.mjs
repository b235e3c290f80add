// Compiles src/, test/, chaos/ and scripts/ to JavaScript for `npm test`, in .test-js/: a mirror of the repository in
// which every .ts file has its .js beside a link to itself, and everything else (node_modules, config,
// contracts, dist, each non-.ts file) is a link to the original. Paths the code builds from
// `import.meta.url` or the package root so land where they do in the sources.
//
// Why: on Node 20, tsx's loader hooks run on another thread and every module a process loads crosses to
// it, which doubles the CPU of loading the service (viem alone is hundreds of modules). The suite starts
// a few hundred processes, so the test processes run this plain JavaScript instead, with no hooks.
//
// esbuild transpiles each file on its own (no type-check: that is `tsc --noEmit`, beside the tests);
// its resolver is asked only to rewrite relative `.ts` imports to `.js` and leave every import external.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const COMPILED = join(ROOT, '.test-js');
/** Folders whose .ts files are compiled; every other top-level entry is linked as it is. */
const COMPILED_DIRS = ['src', 'test', 'chaos', 'scripts'];
/** Top-level entries the mirror leaves out (its own folder and git's). */
const LEFT_OUT = new Set(['.test-js', '.git']);

const link = (target, path) => {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(relative(dirname(path), target), path);
};

/** Links every file of `dir` into the mirror (a .ts file too, beside its .js); answers the .ts files. */
function mirror(dir) {
  const sources = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources.push(...mirror(path));
    else {
      link(path, join(COMPILED, relative(ROOT, path)));
      if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(path);
    }
  }
  return sources;
}

/** Relative `.ts` imports become `.js`; nothing is bundled. */
const rewriteImports = {
  name: 'rewrite-ts-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const path = /^\.\.?\//.test(args.path) ? args.path.replace(/\.ts$/, '.js') : args.path;
      return { path, external: true };
    });
  },
};

export async function compileTests() {
  rmSync(COMPILED, { recursive: true, force: true });
  mkdirSync(COMPILED);
  const sources = [];
  for (const entry of readdirSync(ROOT, { withFileTypes: true })) {
    if (LEFT_OUT.has(entry.name)) continue;
    const path = join(ROOT, entry.name);
    if (COMPILED_DIRS.includes(entry.name)) sources.push(...mirror(path));
    else link(path, join(COMPILED, entry.name));
  }
  await build({
    entryPoints: sources,
    outbase: ROOT,
    outdir: COMPILED,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [rewriteImports],
  });
  return sources.length;
}

// Run directly (`node scripts/compile-tests.mjs`), it compiles and says how long it took.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const count = await compileTests();
  console.log(`compiled ${count} files to ${relative(process.cwd(), COMPILED)} in ${Date.now() - started} ms`);
}
