// Writes the contracts' ABIs that GET /v2/schemas serves (src/chains/<family>/abi/*.json) from the
// Solidity sources, so that the service never compiles Solidity. test/contracts/abi-files.test.ts
// fails when a file no longer matches its contract: run `node --import tsx scripts/write-abis.ts`.
import { writeFileSync } from 'node:fs';
import { ABI_FILES, compiledAbi } from '../test/contracts/abi-files.ts';

for (const file of ABI_FILES) {
  writeFileSync(file.path, `${JSON.stringify(compiledAbi(file), null, 2)}\n`);
  console.log(`wrote ${file.path}`);
}
