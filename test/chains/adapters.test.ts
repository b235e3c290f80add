// The chain-adapter boundary: what is specific to a family stays in src/chains/<family>/, and the
// SQL in src/store/ (a family's own tables in src/chains/<family>/store/). These read the sources as
// text, so a change that crosses a boundary fails here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { chainAdapter } from '../../src/chains/adapters.ts';
import { FAMILIES } from '../../src/chains/registry-schema.ts';
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

/** The family whose folder holds `rel` (a path from the repository root), if any. */
const familyOf = (rel: string) => FAMILIES.find((f) => rel.startsWith(`src/chains/${f}/`));

test("a family is its folder: nothing in src/ imports a family's modules but the family itself and its registry line", () => {
  const crossings = sources(join(ROOT, 'src')).flatMap((file) => {
    const rel = relative(ROOT, file);
    const own = familyOf(rel);
    return [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)].flatMap(([, spec]) => {
      const target = relative(ROOT, resolve(dirname(file), spec!));
      const family = familyOf(target);
      const registryLine = rel === 'src/chains/adapters.ts' && target === `src/chains/${family}/adapter.ts`;
      return family && family !== own && !registryLine ? [`${rel} imports ${target}`] : [];
    });
  });
  assert.deepEqual(crossings, []);
});

test('every chain of the localnet registry has an adapter that works it, and `hashlock dev` can run it', () => {
  for (const chain of localnetRegistry().chains) {
    const adapter = chainAdapter(chain);
    assert.ok(adapter?.connect, `${chain.key}: no runtime`);
    assert.ok(adapter.devnet, `${chain.key}: no devnet part`);
    assert.ok(adapter.partyOfKey, `${chain.key}: no identity for the solver's key`);
  }
});
