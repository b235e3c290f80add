// The chain-adapter boundary: what is specific to a family stays in src/chains/<family>/, and the
// SQL in src/store/ (a family's own tables in src/chains/<family>/store/). These read the sources as
// text, so a change that crosses a boundary fails here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { chainAdapter } from '../../src/chains/adapters.ts';
import { FAMILIES } from '../../src/chains/registry-schema.ts';
import { localChainOf } from '../../src/localnet/families.ts';
import { localnetRegistry } from '../helpers/fixtures.ts';

const ROOT = join(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sources(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Lines of `src/` outside `under` (a folder, or a test of a path) matching `pattern`, as `file:line: text`. */
function linesOutside(under: string | ((rel: string) => boolean), pattern: RegExp): string[] {
  const inside = typeof under === 'string' ? (rel: string) => rel.startsWith(under) : under;
  return sources(join(ROOT, 'src')).flatMap((file) => {
    const rel = relative(ROOT, file);
    if (inside(rel)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : []));
  });
}

test('no chain family is compared outside src/chains/', () => {
  const names = FAMILIES.join('|');
  const comparison = new RegExp(`family\\s*[!=]==|[!=]==\\s*['"](${names})['"]|['"](${names})['"]\\s*[!=]==|case ['"](${names})['"]`);
  assert.deepEqual(linesOutside('src/chains/', comparison), []);
});

test("raw SQL is written in src/store/ only, or in a family's own store (src/chains/<family>/store/)", () => {
  const stores = (rel: string) => rel.startsWith('src/store/') || /^src\/chains\/[a-z]+\/store\//.test(rel);
  assert.deepEqual(linesOutside(stores, /import \{[^}]*\bsql\b[^}]*\} from 'kysely'/), []);
});

/** The family whose folder (src/chains/<family>/) or local chain (src/localnet/<family>/) holds `rel`, a path from the repository root. */
const familyOf = (rel: string, under = 'src/chains') => FAMILIES.find((f) => rel.startsWith(`${under}/${f}/`));

/** The relative imports of a source file, as paths from the repository root; `runtime` leaves out `import type`. */
function importsOf(file: string, runtime = false): string[] {
  const text = readFileSync(file, 'utf8');
  const pattern = runtime ? /(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;]*?from '([^']+)'|import\('([^']+)'\)/g : /from '([^']+)'|import\('([^']+)'\)/g;
  return [...text.matchAll(pattern)].map(([, a, b]) => a ?? b!).map((spec) => (spec.startsWith('.') ? relative(ROOT, resolve(dirname(file), spec)) : spec));
}

test("a family is its folder: nothing in src/ imports a family's modules but the family itself, its registry line and its local chain", () => {
  const crossings = sources(join(ROOT, 'src')).flatMap((file) => {
    const rel = relative(ROOT, file);
    const own = familyOf(rel) ?? familyOf(rel, 'src/localnet');
    return importsOf(file).flatMap((target) => {
      const family = familyOf(target);
      const registryLine = rel === 'src/chains/adapters.ts' && target === `src/chains/${family}/adapter.ts`;
      return family && family !== own && !registryLine ? [`${rel} imports ${target}`] : [];
    });
  });
  assert.deepEqual(crossings, []);
});

test('the local chains are not part of the product: what `hashlock serve` loads (src/service.ts and its imports) holds no module of src/localnet/, nor the packages that run chains', () => {
  const CHAIN_PACKAGES = ['litesvm', '@foundry-rs/anvil', 'solc', '@openzeppelin/contracts'];
  const loaded = new Set<string>();
  const packages = new Set<string>();
  for (const stack = ['src/service.ts']; stack.length > 0; ) {
    const rel = stack.pop()!;
    if (loaded.has(rel)) continue;
    loaded.add(rel);
    for (const target of importsOf(join(ROOT, rel), true)) {
      if (target.startsWith('src/')) stack.push(target);
      else packages.add(target.startsWith('@') ? target.split('/').slice(0, 2).join('/') : target.split('/')[0]!);
    }
  }
  assert.ok(loaded.has('src/chains/solana/runtime.ts') && loaded.has('src/api/app.ts'), 'the walk reaches the service parts');
  assert.deepEqual([...loaded].filter((f) => f.startsWith('src/localnet/')), []);
  assert.deepEqual(CHAIN_PACKAGES.filter((p) => packages.has(p)), []);
});

test('no hashlock command compiles a contract: no module of src/ imports solc or the build scripts, and no command reaches the Solana program build; they read the shipped artifacts', () => {
  const compiling = sources(join(ROOT, 'src')).flatMap((file) =>
    importsOf(file, true)
      .filter((target) => target === 'solc' || target.startsWith('solc/') || target.startsWith('scripts/'))
      .map((target) => `${relative(ROOT, file)} imports ${target}`),
  );
  assert.deepEqual(compiling, []);
  const reached = new Set<string>();
  for (const stack = ['src/cli/main.ts']; stack.length > 0; ) {
    const rel = stack.pop()!;
    if (reached.has(rel)) continue;
    reached.add(rel);
    stack.push(...importsOf(join(ROOT, rel), true).filter((target) => target.startsWith('src/')));
  }
  assert.ok(reached.has('src/localnet/solana/devnet.ts'), "the walk reaches hashlock dev's Solana chain");
  assert.equal(reached.has('src/localnet/solana/programs/build.ts'), false, 'a hashlock command reaches the clang-19 build');
});

test('every chain of the localnet registry has an adapter that works it, and a local chain `hashlock dev` runs', () => {
  for (const chain of localnetRegistry().chains) {
    const adapter = chainAdapter(chain);
    assert.ok(adapter?.connect, `${chain.key}: no runtime`);
    assert.ok(localChainOf(chain.family), `${chain.key}: no local chain`);
    assert.ok(adapter.partyOfKey, `${chain.key}: no identity for the solver's key`);
  }
});
