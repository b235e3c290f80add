import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/service-config.ts';

/** Imports starting with `@` are packages (OpenZeppelin), others files of the contracts folder. */
const COMPILE = `
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { input, contractsDir, requireFrom } = JSON.parse(readFileSync(0, 'utf8'));
const req = require('node:module').createRequire(requireFrom);
const findImports = (path) => {
  try {
    return { contents: readFileSync(path.startsWith('@') ? req.resolve(path) : join(contractsDir, path), 'utf8') };
  } catch {
    return { error: 'not found: ' + path };
  }
};
process.stdout.write(req('solc').compile(JSON.stringify(input), { import: findImports }));
`;

/**
 * solc-js's standard JSON output for `input`, compiled in a child process: solc-js is a 9 MB script
 * and a WASM compiler that stay in a process once loaded (its module, its WASM memory, and the
 * `unhandledRejection` listener it installs hold them), about 60 MB of heap and external memory and
 * more of compiled code, which `hashlock dev` would carry for its whole life after one compile.
 */
export function compileSolidity(input: object, contractsDir: string): unknown {
  const result = spawnSync(process.execPath, ['-e', COMPILE], {
    input: JSON.stringify({ input, contractsDir, requireFrom: join(PACKAGE_ROOT, 'package.json') }),
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`solc: exit ${result.status ?? result.signal}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}
