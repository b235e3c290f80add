// Runs before `npm start` and `npm test`: installs the npm packages when they are missing or older
// than package-lock.json, so both commands work on a fresh clone.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const installed = 'node_modules/.package-lock.json';
const stale = !existsSync(installed) || statSync(installed).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  console.log('installing npm packages...');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
