import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { compiledIsCurrent as isCurrent } from '../../bin/compiled.js';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';

/** A package root with one source file and, if `built` is given, a build stamped at that time (seconds). */
function tree(built?: number): { root: string; touch: (path: string, at: number) => void } {
  const root = mkdtempSync(join(tmpdir(), 'hashlock-compiled-'));
  const touch = (path: string, at: number) => {
    const file = join(root, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '');
    utimesSync(file, at, at);
  };
  touch('src/cli/main.ts', 1_000);
  touch('src/explorer/page.html', 1_000);
  if (built !== undefined) touch('dist/.built', built);
  return { root, touch };
}

test('the compiled service runs only while its build is newer than every file under src/', () => {
  assert.equal(isCurrent(tree().root), false, 'no build');
  const { root, touch } = tree(2_000);
  assert.equal(isCurrent(root), true, 'built after the sources');
  touch('src/explorer/page.html', 3_000);
  assert.equal(isCurrent(root), false, 'a file the sources read changed after the build');
  touch('dist/.built', 4_000);
  assert.equal(isCurrent(root), true, 'built again');
  touch('src/orders/new-module.ts', 5_000);
  assert.equal(isCurrent(root), false, 'a source file added after the build');
});

test('the build (npm run build, before npm start and npm test) runs without tsx', (t) => {
  if (!isCurrent()) {
    if (process.env.CI) assert.fail('dist/ is not built from the current sources: `npm test` builds it first (pretest)');
    t.skip('dist/ is not current: run `npm run build` to test the compiled command');
    return;
  }
  // The compiled entry alone, with no loader: every import resolves to JavaScript and every file it
  // reads beside itself was copied.
  const version = spawnSync(process.execPath, [resolve(PACKAGE_ROOT, 'dist/cli/main.js'), '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, version.stderr);
  const pkg = JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(version.stdout.trim(), pkg.version);
  const schemas = spawnSync(process.execPath, ['--input-type=module', '-e', `
    const { chainAdapter } = await import(${JSON.stringify(resolve(PACKAGE_ROOT, 'dist/chains/adapters.js'))});
    const { loadRegistry } = await import(${JSON.stringify(resolve(PACKAGE_ROOT, 'dist/chains/registry.js'))});
    const registry = loadRegistry(${JSON.stringify(resolve(PACKAGE_ROOT, 'config/registry.localnet.json'))});
    const names = registry.chains.flatMap((c) => Object.keys(chainAdapter(c)?.contractSchemas ?? {}));
    console.log(JSON.stringify(names));
  `], { encoding: 'utf8' });
  assert.equal(schemas.status, 0, schemas.stderr);
  assert.ok((JSON.parse(schemas.stdout) as string[]).includes('evm:htlc_erc20'), schemas.stdout);
});
