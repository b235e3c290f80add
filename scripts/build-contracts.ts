// `npm run build:contracts`: compiles the Solidity contracts and writes the artifacts the repository
// ships (contracts/artifacts/<target>/<Name>.json), which the service, `hashlock dev` and the tests
// read; no `hashlock` command compiles. test/contracts/artifacts.test.ts fails when a source changed
// and its artifact was not written again.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ARTIFACTS_DIR } from '../src/chains/solidity-htlc/artifacts.ts';
import { compileArtifacts } from './contracts/compile.ts';

const artifacts = compileArtifacts();
rmSync(ARTIFACTS_DIR, { recursive: true, force: true });
for (const [path, artifact] of artifacts) {
  const file = join(ARTIFACTS_DIR, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`wrote ${relative(process.cwd(), file)} (code hash ${artifact.codeHash})`);
}
