// The contract artifacts the repository ships (contracts/artifacts/) are what the sources compile to
// now, and their code hash identifies a deployment's runtime code whatever its immutables: the token
// an HTLC locks, the chain id and address its EIP-712 domain caches.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { ARTIFACTS_DIR, loadArtifact, runtimeCodeHash, type ContractArtifact } from '../../src/chains/solidity-htlc/artifacts.ts';
import { compileArtifacts, SOLIDITY_TARGETS } from '../../scripts/contracts/compile.ts';
import type { Hex } from 'viem';
import { startChain, type Chain } from './setup.ts';

const shipped = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? shipped(join(dir, e.name)) : [relative(ARTIFACTS_DIR, join(dir, e.name))]));

test('every shipped Solidity artifact is what contracts/ compiles to now, and nothing else is shipped (npm run build:contracts writes them)', () => {
  const compiled = compileArtifacts();
  assert.deepEqual(SOLIDITY_TARGETS.flatMap((target) => shipped(join(ARTIFACTS_DIR, target))).sort(), [...compiled.keys()].sort());
  for (const [path, artifact] of compiled) {
    assert.deepEqual(JSON.parse(readFileSync(join(ARTIFACTS_DIR, path), 'utf8')) as ContractArtifact, artifact, `${path}: run npm run build:contracts`);
  }
});

let c: Chain;
before(async () => {
  c = await startChain();
});
after(() => c?.stop());

test("a deployment's runtime code hashes to its artifact's code hash whatever its immutables; another contract's does not", async () => {
  const htlc = loadArtifact('evm', 'HTLC');
  assert.ok(htlc.immutableReferences.length >= 2, 'HTLC has immutables: its token and its EIP-712 domain');
  const tokens = [await c.deploy('TestToken', ['A', 'A', 8, c.addr('deployer')]), await c.deploy('TestToken', ['B', 'B', 6, c.addr('deployer')])];
  const codes: Hex[] = [];
  for (const token of tokens) codes.push((await c.client.getCode({ address: await c.deploy('HTLC', [token]) }))!);
  assert.notEqual(codes[0], codes[1], 'two HTLCs of two tokens hold different runtime code');
  for (const code of codes) assert.equal(runtimeCodeHash(code, htlc), htlc.codeHash);
  const native = (await c.client.getCode({ address: await c.deploy('NativeHTLC', []) }))!;
  assert.equal(runtimeCodeHash(native, loadArtifact('evm', 'NativeHTLC')), loadArtifact('evm', 'NativeHTLC').codeHash);
  assert.notEqual(runtimeCodeHash(native, htlc), htlc.codeHash, "NativeHTLC's code is not HTLC's");
  const tampered: Hex = `0x${codes[0]!.slice(2, -2)}${codes[0]!.endsWith('00') ? '01' : '00'}`;
  assert.notEqual(runtimeCodeHash(tampered, htlc), htlc.codeHash, 'one byte changed outside the immutables');
});
