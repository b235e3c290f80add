// The ABIs the service serves as contract schemas (GET /v2/schemas) are those of the contracts it runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ABI_FILES, compiledAbi } from './abi-files.ts';

for (const file of ABI_FILES) {
  test(`${file.path.split('/src/')[1]} is the ABI of ${file.contract} as compiled now`, () => {
    assert.deepEqual(JSON.parse(readFileSync(file.path, 'utf8')), compiledAbi(file), 'run: node --import tsx scripts/write-abis.ts');
  });
}
