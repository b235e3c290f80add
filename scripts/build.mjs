// `npm run build` (and before `npm start`): compiles src/ to dist/ (tsconfig.build.json, incremental)
// and copies the files the sources read beside themselves (ABIs, the explorer's page), then stamps it.
// bin/hashlock.js runs dist/ only while the stamp is newer than every file under src/. A build that
// fails leaves no stamp: the command then runs the sources through tsx, as without a build.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { DIST, ROOT, STAMP } from '../bin/compiled.js';

const SRC = join(ROOT, 'src');
rmSync(STAMP, { force: true });
// The stamp carries the time the build started: a source edited while it ran is newer, so not taken as built.
const started = new Date();
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) {
  console.warn('the build failed: hashlock runs from the TypeScript sources through tsx');
  process.exit(0);
}
const copy = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copy(path);
    else if (!entry.name.endsWith('.ts')) {
      const to = join(DIST, relative(SRC, path));
      mkdirSync(dirname(to), { recursive: true });
      cpSync(path, to);
    }
  }
};
copy(SRC);
writeFileSync(STAMP, `${started.toISOString()}\n`);
utimesSync(STAMP, started, started);
