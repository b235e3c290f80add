// The deployment file beside the registry: `hashlock deploy` runs for two chains at once (two processes)
// each read it, change their chain's entry and write it back, so without its lock one entry is lost.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { readDeployment } from '../../src/deploy/deployment-file.ts';

// This file runs as TypeScript through tsx or compiled to JavaScript; the module beside it is the same kind.
const here = fileURLToPath(import.meta.url);
const moduleUrl = new URL(`../../src/deploy/deployment-file${extname(here)}`, import.meta.url).href;

/** A process writing `chains` entries one after another, as `hashlock deploy` for each would. */
function writer(registryPath: string, prefix: string, chains: number): Promise<void> {
  const script = `
    const { writeChainDeployment } = await import(${JSON.stringify(moduleUrl)});
    for (let i = 0; i < ${chains}; i++) {
      await writeChainDeployment(${JSON.stringify(registryPath)}, '${prefix}' + i, { chain_id: 'evm:1', deployer: '0x00', contracts: [], updated_at: new Date().toISOString() });
    }`;
  const args = [...(extname(here) === '.ts' ? ['--import', 'tsx'] : []), '--input-type=module', '-e', script];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`writer ${prefix} exited ${code}: ${stderr}`))));
  });
}

test('four processes writing their chains into one deployment file at once keep every entry', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-deployment-'));
  const registryPath = join(dir, 'registry.json');
  writeFileSync(registryPath, '{}');
  await Promise.all(['a', 'b', 'c', 'd'].map((prefix) => writer(registryPath, prefix, 25)));
  const keys = Object.keys(readDeployment(registryPath).chains);
  assert.equal(keys.length, 100, `entries kept: ${keys.length}`);
});
