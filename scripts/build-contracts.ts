// `npm run build:contracts`: compiles the contracts and writes the artifacts the repository ships,
// which the service, `hashlock dev` and the tests read; no `hashlock` command compiles:
// - contracts/artifacts/<evm|tron>/<Name>.json: the Solidity contracts (solc-js);
// - contracts/artifacts/solana/<program>.so: the Solana programs (clang-19 and the project's linker;
//   left as they are, with a warning, where clang-19 is missing).
// test/contracts/artifacts.test.ts and test/chains/solana/programs/build.test.ts build them again and
// fail when an artifact no longer matches its source.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ARTIFACTS_DIR } from '../src/chains/solidity-htlc/artifacts.ts';
import { SOLANA_PROGRAMS, solanaProgramPath } from '../src/chains/solana/program-artifacts.ts';
import { buildProgram } from '../src/localnet/solana/programs/build.ts';
import { compileArtifacts, SOLIDITY_TARGETS } from './contracts/compile.ts';

const artifacts = compileArtifacts();
for (const target of SOLIDITY_TARGETS) rmSync(join(ARTIFACTS_DIR, target), { recursive: true, force: true });
for (const [path, artifact] of artifacts) {
  const file = join(ARTIFACTS_DIR, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`wrote ${relative(process.cwd(), file)} (code hash ${artifact.codeHash})`);
}

const cacheDir = mkdtempSync(join(tmpdir(), 'hashlock-solana-build-'));
try {
  for (const name of SOLANA_PROGRAMS) {
    const built = await buildProgram(name, { cacheDir });
    if ('unavailable' in built) {
      console.warn(`left ${relative(process.cwd(), solanaProgramPath(name))} as it is: ${built.unavailable}`);
      continue;
    }
    mkdirSync(dirname(solanaProgramPath(name)), { recursive: true });
    writeFileSync(solanaProgramPath(name), built.bytes);
    console.log(`wrote ${relative(process.cwd(), solanaProgramPath(name))} (${built.bytes.length} bytes)`);
  }
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}
