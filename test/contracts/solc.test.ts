// solc-js compiles in a child process, so that its script and WASM memory never stay in the caller's.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { CONTRACTS_DIR } from '../../scripts/contracts/compile.ts';
import { compileSolidity } from '../../scripts/contracts/solc.ts';

const require = createRequire(import.meta.url);

test('compileSolidity compiles in a child process: imports of the contracts folder and of packages resolve, and solc never loads here', () => {
  const sources = {
    'Probe.sol': {
      content: `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import "./TestToken.sol";
import "@openzeppelin/contracts/utils/Strings.sol";
contract Probe { function name() external pure returns (string memory) { return Strings.toString(7); } }`,
    },
  };
  const output = compileSolidity({ language: 'Solidity', sources, settings: { outputSelection: { '*': { '*': ['abi'] } } } }, CONTRACTS_DIR) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[] }>>;
  };
  assert.deepEqual((output.errors ?? []).filter((e) => e.severity === 'error'), []);
  assert.equal(output.contracts['Probe.sol']?.['Probe']?.abi.length, 1);
  assert.ok(output.contracts['TestToken.sol'], 'the import from the contracts folder was compiled');
  assert.deepEqual(Object.keys(require.cache).filter((file) => /[\\/]solc[\\/]/.test(file)), []);
});

test('compileSolidity answers an unknown import as solc reports it', () => {
  const sources = { 'Bad.sol': { content: 'pragma solidity ^0.8.20;\nimport "./Missing.sol";\ncontract Bad {}' } };
  const output = compileSolidity({ language: 'Solidity', sources, settings: {} }, CONTRACTS_DIR) as { errors?: Array<{ severity: string; formattedMessage: string }> };
  assert.match(output.errors?.map((e) => e.formattedMessage).join('\n') ?? '', /not found: Missing\.sol/);
});
